import { execFileSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { afterAll, describe, expect, test } from 'vitest'

// docs/api is generated from the TSDoc of every public export; it must match the code.
const root = join(import.meta.dirname, '..')
const fresh = mkdtempSync(join(tmpdir(), 'dap-api-docs-'))
// typedoc takes a minute alone and several on a busy machine: this bound is for a hang only.
const HANG = 600_000

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? files(join(dir, entry.name)) : [join(dir, entry.name)],
  )
}

afterAll(() => rmSync(fresh, { recursive: true, force: true }))

describe('generated API reference', () => {
  test(
    'docs/api is fresh (run `npm run docs:api` after changing an export or its TSDoc)',
    () => {
      execFileSync(join(root, 'node_modules', '.bin', 'typedoc'), ['--out', fresh], {
        cwd: root,
        stdio: 'pipe',
      })
      const committed = join(root, 'docs', 'api')
      const expected = files(fresh)
        .map((file) => relative(fresh, file))
        .sort()
      expect(
        files(committed)
          .map((file) => relative(committed, file))
          .sort(),
      ).toEqual(expected)
      for (const file of expected) {
        expect(readFileSync(join(committed, file), 'utf8'), file).toBe(
          readFileSync(join(fresh, file), 'utf8'),
        )
      }
    },
    HANG,
  )
})
