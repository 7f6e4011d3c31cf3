/**
 * Which packages an entry loads at run time, read from the sources: the adapter entries must load
 * only their own framework, and only the ./redis entry may load ioredis (optional peers).
 */
import { readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'

const root = join(import.meta.dirname, '..', '..')

// Runtime module specifiers of a file: `import type` / `export type` lines vanish when compiled.
const STATEMENT = /^\s*(import|export)\s+(type\s+)?[^'"]*?\bfrom\s+['"]([^'"]+)['"]/gm

function runtimeImports(file: string): string[] {
  const source = readFileSync(file, 'utf8')
  return [...source.matchAll(STATEMENT)].filter((match) => match[2] === undefined).map((match) => match[3]!)
}

/**
 * Every bare (package or node:) specifier reached at run time from an entry, following relative
 * imports.
 *
 * @example
 * packagesReachedFrom('adapters/redis/index.ts') // Set { 'ioredis', 'zod' }
 */
export function packagesReachedFrom(entry: string): Set<string> {
  const seen = new Set<string>()
  const packages = new Set<string>()
  const visit = (file: string) => {
    if (seen.has(file)) return
    seen.add(file)
    for (const specifier of runtimeImports(file)) {
      if (specifier.startsWith('.')) visit(resolve(dirname(file), specifier.replace(/\.js$/, '.ts')))
      else packages.add(specifier)
    }
  }
  visit(join(root, entry))
  return packages
}
