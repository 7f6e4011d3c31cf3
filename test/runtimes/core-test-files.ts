/**
 * Which test files are the pure core's unit tests (issue 14): the ones that, following their
 * relative imports through test helpers, reach src/ and nothing else of the project, and only
 * packages a runtime-neutral test needs. Derived from the sources, so a new unit test of src/ is
 * run under Bun and Deno without anyone listing it.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'

// The test kit and the libraries the core itself uses, plus the node: modules the tests read
// sources and reference digests with (Bun and Deno provide them); a framework, a socket or the
// CLI makes a file a test of more than the core.
const NEUTRAL_PACKAGES = new Set([
  'vitest',
  'fast-check',
  'zod',
  'ipaddr.js',
  '@noble/hashes',
  'node:crypto',
  'node:fs',
  'node:path',
])

// Runtime module specifiers: `import type` / `export type` lines vanish when compiled.
const STATEMENT = /^\s*(import|export)\s+(type\s+)?[^'"]*?\bfrom\s+['"]([^'"]+)['"]/gm

function runtimeImports(file: string): string[] {
  const source = readFileSync(file, 'utf8')
  return [...source.matchAll(STATEMENT)].filter((match) => match[2] === undefined).map((match) => match[3]!)
}

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return testFiles(path)
    return entry.name.endsWith('.test.ts') ? [path] : []
  })
}

// Whether a test file tests the core only, and reaches src/ at all.
function testsCoreOnly(root: string, file: string): boolean {
  const src = `${join(root, 'src')}/`
  const seen = new Set<string>()
  let reachesSrc = false
  const visit = (path: string): boolean => {
    if (seen.has(path)) return true
    seen.add(path)
    if (path.startsWith(src)) {
      reachesSrc = true
      return true
    }
    if (!path.startsWith(`${join(root, 'test')}/`)) return false
    return runtimeImports(path).every((specifier) =>
      specifier.startsWith('.')
        ? visit(resolve(dirname(path), specifier.replace(/\.js$/, '.ts')))
        : NEUTRAL_PACKAGES.has(specifier),
    )
  }
  return visit(file) && reachesSrc
}

/**
 * The pure core's unit test files, relative to `root`, sorted.
 *
 * @example
 * coreTestFiles(root).includes('test/decisions/decide.test.ts') // true
 */
export function coreTestFiles(root: string): string[] {
  return testFiles(join(root, 'test'))
    .filter((file) => testsCoreOnly(root, file))
    .map((file) => relative(root, file))
    .sort()
}
