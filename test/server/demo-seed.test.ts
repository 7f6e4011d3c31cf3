import { expect, test } from 'vitest'
import { DEMO_SEED, DEMO_TOKENS } from '../../examples/server/seed/demo.js'
import { parseSeed } from '../../examples/server/seed/schema.js'
import { isWellFormedTokenValue, PUBLIC_DATASET_LEVELS } from '../../src/index.js'

test('the demo seed is a valid seed', () => {
  expect(() => parseSeed(DEMO_SEED)).not.toThrow()
})

test('every demo token value is well formed (design §6), and distinct', () => {
  for (const token of DEMO_TOKENS) expect(isWellFormedTokenValue(token.value), token.name).toBe(true)
  expect(new Set(DEMO_TOKENS.map((token) => token.value)).size).toBe(DEMO_TOKENS.length)
})

test('the demo shows every public level, an export-restricted dataset and several scope sets', () => {
  const seed = parseSeed(DEMO_SEED)
  expect(new Set(seed.datasets.map((dataset) => dataset.publicLevel))).toEqual(new Set(PUBLIC_DATASET_LEVELS))
  expect(seed.datasets.some((dataset) => dataset.exportRestrictions?.allowedIps !== undefined)).toBe(true)
  expect(new Set(seed.tokens.map((token) => token.scopes.join(' '))).size).toBeGreaterThanOrEqual(4)
  expect(seed.organizations[0]?.admins.length).toBeGreaterThan(0)
  expect(seed.organizations[0]?.members.length).toBeGreaterThan(0)
  expect(seed.workflows.length).toBeGreaterThan(0)
})

test('the demo has a public client whose tokens are always DPoP-bound', () => {
  const seed = parseSeed(DEMO_SEED)
  expect(seed.clients.find((client) => client.dpopBound === true)).toMatchObject({
    id: 'demo-dpop',
    offline: true,
  })
})
