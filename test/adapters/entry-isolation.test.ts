import { describe, expect, test } from 'vitest'
import { packagesReachedFrom } from './runtime-imports.js'

describe('each adapter entry loads only its own framework (frameworks are optional peers)', () => {
  test.each([
    ['adapters/express/index.ts', ['fastify', 'fastify-plugin', 'hono', '@hono/node-server', 'express']],
    ['adapters/fastify/index.ts', ['express', 'hono', '@hono/node-server', 'fastify']],
    ['adapters/hono/index.ts', ['express', 'fastify', 'fastify-plugin', '@hono/node-server', 'hono']],
  ])('%s', (entry, forbidden) => {
    const reached = [...packagesReachedFrom(entry)]
    expect(reached.filter((name) => forbidden.includes(name) || name.startsWith('hono/'))).toEqual([])
  })

  test('the Hono entry needs no Node built-in at run time', () => {
    expect(
      [...packagesReachedFrom('adapters/hono/index.ts')].filter((name) => name.startsWith('node:')),
    ).toEqual([])
  })

  test('the OpenAPI entry loads no framework, no generator and no Node built-in: only the core', () => {
    const core = new Set(packagesReachedFrom('src/index.ts'))
    expect([...packagesReachedFrom('src/openapi/index.ts')].filter((name) => !core.has(name))).toEqual([])
    expect([...core].filter((name) => name.startsWith('node:'))).toEqual([])
  })

  test('the JWT entry loads only the core, which verifies JOSE with jose: no framework, no Node built-in', () => {
    const core = new Set(packagesReachedFrom('src/index.ts'))
    expect(core).toContain('jose')
    expect([...packagesReachedFrom('src/jwt/index.ts')].filter((name) => !core.has(name))).toEqual([])
  })

  test('the MCP entry loads no framework, no MCP SDK and no Node built-in: only the core', () => {
    const core = new Set(packagesReachedFrom('src/index.ts'))
    expect([...packagesReachedFrom('adapters/mcp/index.ts')].filter((name) => !core.has(name))).toEqual([])
  })

  test('the scan sees runtime imports and skips type-only ones', () => {
    expect([...packagesReachedFrom('adapters/fastify/index.ts')]).toEqual(
      expect.arrayContaining(['node:stream', 'fastify-plugin', 'zod']),
    )
  })
})
