import { join } from 'node:path'
import ts from 'typescript'
import { describe, expect, test } from 'vitest'

// Every public export carries a TSDoc summary; every exported function and class an @example too.
const root = join(import.meta.dirname, '..')
const ENTRIES = [
  'src/index.ts',
  'src/oauth/index.ts',
  'src/introspection/index.ts',
  'src/jwt/index.ts',
  'adapters/express/index.ts',
  'adapters/fastify/index.ts',
  'adapters/hono/index.ts',
  'adapters/redis/index.ts',
  'src/testing/index.ts',
  'src/testing/arbitraries.ts',
  'src/client.ts',
  'src/openapi/index.ts',
  'src/dpop/index.ts',
  'adapters/mcp/index.ts',
]

const program = ts.createProgram(
  ENTRIES.map((entry) => join(root, entry)),
  {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    strict: true,
    skipLibCheck: true,
  },
)
const checker = program.getTypeChecker()

interface Export {
  readonly name: string
  readonly hasDoc: boolean
  readonly needsExample: boolean
  readonly hasExample: boolean
}

function exportsOf(entry: string): Export[] {
  const source = program.getSourceFile(join(root, entry))
  if (source === undefined) throw new Error(`${entry} not found`)
  const moduleSymbol = checker.getSymbolAtLocation(source)!
  return checker.getExportsOfModule(moduleSymbol).map((exported) => {
    const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported
    const docs = ts.displayPartsToString(symbol.getDocumentationComment(checker)).trim()
    const tags = symbol.getJsDocTags(checker)
    const callable = (symbol.flags & (ts.SymbolFlags.Function | ts.SymbolFlags.Class)) !== 0
    return {
      name: `${entry}: ${exported.name}`,
      hasDoc: docs.length > 0,
      needsExample: callable,
      hasExample: tags.some((tag) => tag.name === 'example'),
    }
  })
}

const all = ENTRIES.flatMap(exportsOf)

describe('TSDoc on the public API', () => {
  test('finds the exports', () => {
    expect(all.length).toBeGreaterThan(100)
  })

  test('every export has a summary', () => {
    expect(all.filter((e) => !e.hasDoc).map((e) => e.name)).toEqual([])
  })

  test('every exported function and class has an @example', () => {
    expect(all.filter((e) => e.needsExample && !e.hasExample).map((e) => e.name)).toEqual([])
  })
})
