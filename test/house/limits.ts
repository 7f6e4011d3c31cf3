/**
 * The size limits a newcomer can hold in their head, measured over the shipped and example code:
 * files, functions, adapters, the root entry's values and comments that point outside the repo.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import ts from 'typescript'

export const ROOT = join(import.meta.dirname, '..', '..')
export const SOURCE_DIRECTORIES = ['src', 'adapters', 'cli', 'examples'] as const
export const MAX_FILE_LINES = 500
export const MAX_FUNCTION_LINES = 100
export const MAX_ADAPTER_CODE_LINES = 220

/** Every `.ts` file under the source directories, relative to the repository root. */
export function sourceFiles(): string[] {
  const files: string[] = []
  const walk = (directory: string): void => {
    for (const entry of readdirSync(directory)) {
      const path = join(directory, entry)
      if (statSync(path).isDirectory()) walk(path)
      else if (path.endsWith('.ts')) files.push(relative(ROOT, path))
    }
  }
  for (const directory of SOURCE_DIRECTORIES) walk(join(ROOT, directory))
  return files.sort()
}

export function lineCount(file: string): number {
  const text = readFileSync(join(ROOT, file), 'utf8')
  return text.endsWith('\n') ? text.split('\n').length - 1 : text.split('\n').length
}

/**
 * Lines that hold code, counted as line counters do: not blank, and not starting (after the
 * indentation) with `//`, `/*` or `*`.
 */
export function codeLineCount(file: string): number {
  return readFileSync(join(ROOT, file), 'utf8')
    .split('\n')
    .filter((line) => {
      const text = line.trim()
      return text !== '' && !text.startsWith('//') && !text.startsWith('/*') && !text.startsWith('*')
    }).length
}

/** Functions (declarations, methods, arrows, expressions) longer than `max` lines, as `file:line name (n lines)`. */
export function longFunctions(file: string, max = MAX_FUNCTION_LINES): string[] {
  const source = ts.createSourceFile(
    file,
    readFileSync(join(ROOT, file), 'utf8'),
    ts.ScriptTarget.Latest,
    true,
  )
  const found: string[] = []
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body !== undefined) {
      const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line
      const end = source.getLineAndCharacterOfPosition(node.getEnd()).line
      const lines = end - start + 1
      if (lines > max) {
        const name = node.name !== undefined ? node.name.getText(source) : '(anonymous)'
        found.push(`${file}:${start + 1} ${name} (${lines} lines)`)
      }
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return found
}

/** Comments that name documents a clone does not have. */
export function outsideReferences(file: string): string[] {
  const text = readFileSync(join(ROOT, file), 'utf8')
  const found: string[] = []
  text.split('\n').forEach((line, index) => {
    if (/\b(design|contract) §|\b[Ii]ssue \d+\b/.test(line)) found.push(`${file}:${index + 1}`)
  })
  return found
}
