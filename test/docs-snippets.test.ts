import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import ts from 'typescript'
import { describe, expect, test } from 'vitest'

// Docs are code: every ```ts block of README.md and docs/*.md (docs/api/ is generated) compiles
// under the project's own strict settings, importing the package by its public names. One program
// holds every block, each as its own module, so the whole check costs one type-check.
const root = join(import.meta.dirname, '..')
const SNIPPETS = join(root, '.snippets')

// The package's public names, mapped to the sources they are built from (tsup.config.ts).
const ENTRY_POINTS: Record<string, string> = {
  'data-access-policy': 'src/index.ts',
  'data-access-policy/oauth': 'src/oauth/index.ts',
  'data-access-policy/introspection': 'src/introspection/index.ts',
  'data-access-policy/express': 'adapters/express/index.ts',
  'data-access-policy/fastify': 'adapters/fastify/index.ts',
  'data-access-policy/hono': 'adapters/hono/index.ts',
  'data-access-policy/redis': 'adapters/redis/index.ts',
  'data-access-policy/testing': 'src/testing/index.ts',
  'data-access-policy/testing/arbitraries': 'src/testing/arbitraries.ts',
  'data-access-policy/client': 'src/client.ts',
  'data-access-policy/openapi': 'src/openapi/index.ts',
  'data-access-policy/dpop': 'src/dpop/index.ts',
}

// The host's own code that samples call without showing it: its data access and its handlers.
// The slices of the Bun and Deno globals the per-runtime wire-ups use, as the runtime test declares them.
const RUNTIME_GLOBALS = readFileSync(join(import.meta.dirname, 'runtimes', 'runtime-globals.d.ts'), 'utf8')

const PRELUDE = `
type StoredDataset = {
  readonly owner: string
  readonly name: string
  readonly publicLevel: import('data-access-policy').PublicDatasetLevel
  readonly restrictions: import('data-access-policy').ExportRestrictions
}
type DatasetParams = { readonly owner: string; readonly name: string }
declare const db: {
  dataset(owner: string, name: string): Promise<StoredDataset | undefined>
  levelOf(userId: string | undefined, dataset: StoredDataset): Promise<import('data-access-policy').DatasetLevel>
  levelOfSync(userId: string | undefined, dataset: StoredDataset): import('data-access-policy').DatasetLevel
  datasetsOf(organization: string): Promise<StoredDataset[]>
}
declare function metadataOf(params: DatasetParams): { readonly title: string }
declare function rowsOf(params: DatasetParams): readonly unknown[]
declare const userLevel: import('data-access-policy').DatasetLevel
// The host's resolver that docs/testing.md tests.
declare module '*/describe.js' {
  export function describeDataset(
    params: { owner: string; name: string },
    principal: import('data-access-policy').Principal,
  ): Promise<import('data-access-policy').DatasetResource | undefined>
}
// The runtime test's app builder that docs/hono.md's per-runtime wire-ups import (test/runtimes/app.ts).
declare module '*/app.js' {
  export function createRuntimeApp(
    runtime: 'node' | 'bun' | 'deno' | 'workerd',
    getConnInfo: (c: import('hono').Context) => import('hono/conninfo').ConnInfo,
  ): import('hono').Hono
}
${RUNTIME_GLOBALS}
// What README's first block defines and its framework blocks use (its own module shadows these).
declare const policy: import('data-access-policy').AccessPolicy
declare function describe(
  params: { owner: string; name: string },
  principal: import('data-access-policy').Principal,
): Promise<import('data-access-policy').DatasetResource | undefined>
`

interface Snippet {
  /** `docs/express.md:9`: where the block's first line of code is. */
  readonly origin: string
  readonly markdown: string
  readonly firstLine: number
  readonly file: string
  readonly code: string
}

function markdownFiles(): string[] {
  const docs = readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => join('docs', name))
  return ['README.md', ...docs]
}

// A fence may be indented (inside a list item); its code is the lines up to the closing fence at the
// same indentation, with that indentation removed.
const FENCE = /^( *)```ts\n([\s\S]*?)^\1```$/gm

function snippetsOf(markdown: string): Snippet[] {
  const text = readFileSync(join(root, markdown), 'utf8')
  return [...text.matchAll(FENCE)].map((match, index) => {
    const indent = match[1]!
    const firstLine = text.slice(0, match.index).split('\n').length + 1
    const code = match[2]!
      .split('\n')
      .map((line) => (line.startsWith(indent) ? line.slice(indent.length) : line))
      .join('\n')
    return {
      origin: `${markdown}:${firstLine}`,
      markdown,
      firstLine,
      file: join(SNIPPETS, `${markdown.replaceAll('/', '_')}.${index + 1}.ts`),
      // `export {}` makes every block a module: its names are its own, and top-level await works.
      code: `${code}\nexport {}\n`,
    }
  })
}

function compilerOptions(): ts.CompilerOptions {
  const config = ts.readConfigFile(join(root, 'tsconfig.json'), ts.sys.readFile)
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, root)
  const paths = Object.fromEntries(
    Object.entries(ENTRY_POINTS).map(([name, source]) => [name, [join(root, source)]]),
  )
  return { ...parsed.options, paths, noEmit: true }
}

/** Type-checks the given virtual files (and the prelude) in one program; diagnostics per file. */
function check(files: ReadonlyMap<string, string>): Map<string, string[]> {
  const prelude = join(SNIPPETS, 'prelude.d.ts')
  const virtual = new Map([...files, [prelude, PRELUDE]])
  const options = compilerOptions()
  const host = ts.createCompilerHost(options)
  const { getSourceFile, fileExists, readFile } = host
  host.fileExists = (name) => virtual.has(name) || fileExists(name)
  host.readFile = (name) => virtual.get(name) ?? readFile(name)
  host.getSourceFile = (name, language, ...rest) => {
    const text = virtual.get(name)
    return text === undefined
      ? getSourceFile(name, language, ...rest)
      : ts.createSourceFile(name, text, language, true)
  }
  const program = ts.createProgram([...virtual.keys()], options, host)
  const found = new Map<string, string[]>()
  for (const name of files.keys()) {
    const source = program.getSourceFile(name)!
    const diagnostics = [
      ...program.getSyntacticDiagnostics(source),
      ...program.getSemanticDiagnostics(source),
    ]
    found.set(
      name,
      diagnostics.map((diagnostic) => {
        const { line } = source.getLineAndCharacterOfPosition(diagnostic.start ?? 0)
        return `line ${line + 1}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')}`
      }),
    )
  }
  return found
}

const snippets = markdownFiles().flatMap(snippetsOf)
// A block that must fail, in the same program: proof that the check reaches the blocks at all.
const CANARY = join(SNIPPETS, 'canary.ts')
const results = check(
  new Map([
    ...snippets.map((snippet) => [snippet.file, snippet.code] as const),
    [
      CANARY,
      "import { decide } from 'data-access-policy/testing'\ndecide({ operation: 'table.read' })\nexport {}\n",
    ],
  ]),
)

describe('the TypeScript blocks of README.md and docs/*.md', () => {
  test('are found in the guides that have them', () => {
    const documents = new Set(snippets.map((snippet) => snippet.markdown))
    for (const markdown of [
      'README.md',
      'docs/express.md',
      'docs/fastify.md',
      'docs/hono.md',
      'docs/testing.md',
    ])
      expect(documents).toContain(markdown)
  })

  test('a wrong block fails the check', () => {
    expect(results.get(CANARY)!.join('\n')).toMatch(/principal/)
  })

  test.each(snippets.map((snippet) => [snippet.origin, snippet] as const))(
    '%s compiles under strict',
    (_, snippet) => {
      // Reported at the Markdown line, so a failure points into the document.
      const messages = results
        .get(snippet.file)!
        .map((message) =>
          message.replace(
            /^line (\d+)/,
            (_, line: string) => `${snippet.markdown}:${snippet.firstLine + Number(line) - 1}`,
          ),
        )
      expect(messages, relative(root, snippet.file)).toEqual([])
    },
  )
})
