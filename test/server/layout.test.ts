import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import ts from 'typescript'
import { describe, expect, test } from 'vitest'

// The reference server reads by concern (issue: rooms): the composition root at the top, one folder
// per concern, each folder with a README saying what it owns, and folders in layers — a folder's
// modules use at run time only folders below it, so no two folders import each other, even through
// a third. Type-only imports are erased before anything runs, so they may point anywhere.
const server = join(import.meta.dirname, '../../examples/server')

/** Lowest first: each folder may import (at run time) only the folders before it in this list. */
const LAYERS = [
  'routes',
  'request',
  'limits',
  'seed',
  'leaks',
  'api',
  'mcp',
  'web',
  'oauth',
  'openapi',
  'http',
]

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return sourceFiles(path)
    return entry.name.endsWith('.ts') ? [path] : []
  })
}

/** The relative specifiers a module imports or re-exports from at run time (not `import type`). */
function runtimeImports(source: string): string[] {
  const file = ts.createSourceFile('module.ts', source, ts.ScriptTarget.Latest)
  const found: string[] = []
  for (const statement of file.statements) {
    if (ts.isImportDeclaration(statement)) {
      const clause = statement.importClause
      const typeOnly =
        clause !== undefined &&
        (clause.isTypeOnly ||
          (clause.name === undefined &&
            clause.namedBindings !== undefined &&
            ts.isNamedImports(clause.namedBindings) &&
            clause.namedBindings.elements.length > 0 &&
            clause.namedBindings.elements.every((element) => element.isTypeOnly)))
      if (!typeOnly) found.push((statement.moduleSpecifier as ts.StringLiteral).text)
    } else if (
      ts.isExportDeclaration(statement) &&
      statement.moduleSpecifier !== undefined &&
      !statement.isTypeOnly
    ) {
      found.push((statement.moduleSpecifier as ts.StringLiteral).text)
    }
  }
  return found.filter((specifier) => specifier.startsWith('.'))
}

/** The top-level folder of examples/server a path lies in, or '' for the top itself. */
function folderOf(path: string): string {
  const parts = relative(server, path).split('/')
  return parts.length > 1 ? parts[0]! : ''
}

describe('examples/server is grouped by concern', () => {
  const folders = readdirSync(server, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)

  test('at most 8 modules at the top: the composition root', () => {
    const top = readdirSync(server).filter((name) => name.endsWith('.ts'))
    expect(top.length).toBeLessThanOrEqual(8)
    expect(top).toContain('main.ts')
  })

  test('at least 5 concern folders, each in a layer and with a README saying what it owns', () => {
    expect(folders.length).toBeGreaterThanOrEqual(5)
    expect([...folders].sort()).toEqual([...LAYERS].sort())
    for (const folder of folders) expect(existsSync(join(server, folder, 'README.md')), folder).toBe(true)
  })

  test('a folder imports at run time only folders below it, and never the top', () => {
    const crossings: string[] = []
    for (const file of sourceFiles(server)) {
      const from = folderOf(file)
      if (from === '') continue
      for (const specifier of runtimeImports(readFileSync(file, 'utf8'))) {
        const target = resolve(dirname(file), specifier)
        if (!target.startsWith(server)) continue
        const to = folderOf(target)
        if (to === from) continue
        if (to === '' || LAYERS.indexOf(to) > LAYERS.indexOf(from)) {
          crossings.push(`${relative(server, file)} → ${relative(server, target)}`)
        }
      }
    }
    expect(crossings).toEqual([])
  })

  test.each([
    ["import { a } from '../x.js'", ['../x.js']],
    ["import type { A } from '../x.js'", []],
    ["import { type A, type B } from '../x.js'", []],
    ["import { type A, b } from '../x.js'", ['../x.js']],
    [
      "import x from './x.js'\nexport { y } from './y.js'\nexport type { Z } from './z.js'",
      ['./x.js', './y.js'],
    ],
    ["import '../side-effect.js'\nimport { z } from 'zod'", ['../side-effect.js']],
  ])('the import reader: %s', (source, expected) => {
    expect(runtimeImports(source)).toEqual(expected)
  })
})
