import { describe, expect, test } from 'vitest'
import * as root from '../../src/index.js'
import {
  codeLineCount,
  lineCount,
  longFunctions,
  MAX_ADAPTER_CODE_LINES,
  MAX_FILE_LINES,
  outsideReferences,
  sourceFiles,
} from './limits.js'

// What a newcomer must be able to hold in their head, kept held: docs/architecture.md names these.
describe('the house limits', () => {
  const files = sourceFiles()

  test('the walk finds the sources', () => {
    expect(files).toContain('src/policy.ts')
    expect(files).toContain('adapters/fastify/index.ts')
    expect(files).toContain('cli/main.ts')
    expect(files).toContain('examples/server/app.ts')
  })

  test(`no source file over ${MAX_FILE_LINES} lines`, () => {
    expect(files.filter((file) => lineCount(file) > MAX_FILE_LINES)).toEqual([])
  })

  test('no function over 100 lines', () => {
    expect(files.flatMap((file) => longFunctions(file))).toEqual([])
  })

  test(`each framework adapter within ${MAX_ADAPTER_CODE_LINES} code lines`, () => {
    const adapters = ['adapters/express/index.ts', 'adapters/fastify/index.ts', 'adapters/hono/index.ts']
    expect(adapters.filter((file) => codeLineCount(file) > MAX_ADAPTER_CODE_LINES)).toEqual([])
  })

  test('no comment points at a document outside the repository', () => {
    expect(files.flatMap(outsideReferences)).toEqual([])
  })

  test('the root entry exports at most 50 values', () => {
    expect(Object.keys(root).length).toBeLessThanOrEqual(50)
  })
})

describe('the measures themselves', () => {
  test('a long function and a short one', () => {
    expect(longFunctions('test/house/limits.ts', 5).length).toBeGreaterThan(0)
    expect(longFunctions('test/house/limits.ts', 1000)).toEqual([])
  })

  test('code lines leave out comments and blank lines', () => {
    expect(codeLineCount('test/house/limits.ts')).toBeLessThan(lineCount('test/house/limits.ts'))
  })
})
