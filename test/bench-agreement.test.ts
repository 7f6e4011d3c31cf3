import { describe, expect, test } from 'vitest'
import {
  buildCatalogueMix,
  catalogueExpected,
  type DecisionLibrary,
  decideCandidate,
  floorCandidate,
  precomputedCandidate,
} from '../bench/decision-mix.js'
import {
  baselineCandidate,
  buildMix,
  casbinCandidate,
  caslCandidate,
  cedarCandidate,
  coreCandidate,
  expected,
} from '../bench/decision-peers.js'
import { decide } from '../src/decisions/decide.js'
import { OPERATIONS } from '../src/decisions/operations.js'
import { parseScopes } from '../src/decisions/scopes.js'
import { compileExportRestrictions } from '../src/restrictions/export-restrictions.js'

// `npm run bench` runs the built package; the sources decide alike.
const library: DecisionLibrary = { decide, parseScopes, compileExportRestrictions }

// The decision benchmark is only meaningful if every peer encodes the same rule.
describe('decision benchmark peers agree on the whole mix', () => {
  const mix = buildMix()
  const truth = mix.map(expected)

  test('the mix has allowed and denied requests', () => {
    expect(truth.filter(Boolean).length).toBeGreaterThan(50)
    expect(truth.filter((x) => !x).length).toBeGreaterThan(50)
  })

  test.each([
    ['core', async () => coreCandidate(mix, library)],
    ['baseline', async () => baselineCandidate(mix)],
    ['CASL', async () => caslCandidate(mix)],
    ['casbin', async () => casbinCandidate(mix)],
    ['Cedar', async () => cedarCandidate(mix)],
  ])('%s', async (_name, make) => {
    const run = await make()
    expect(mix.map((_, i) => run(i))).toEqual(truth)
  })
})

// design §11's target: a rotating mix of at least 500 distinct requests over the whole catalogue.
describe('the catalogue mix', () => {
  const mix = buildCatalogueMix()
  const truth = mix.map(catalogueExpected)

  test('has at least 500 distinct requests of every family, with and without export caps', () => {
    expect(new Set(mix.map((request) => JSON.stringify(request))).size).toBe(mix.length)
    expect(mix.length).toBeGreaterThanOrEqual(500)
    for (const family of ['dataset', 'workflow', 'organization'] as const) {
      const answers = mix.flatMap((request, i) => (request.family === family ? [truth[i]] : []))
      expect(answers).toContain(true)
      expect(answers).toContain(false)
    }
    const capped = mix.filter((request) => request.restrictions !== undefined)
    expect(capped.length).toBeGreaterThan(100)
    expect(capped.every((request) => OPERATIONS[request.operation].dataContent)).toBe(true)
    expect(mix.some((r) => r.restrictions === undefined && OPERATIONS[r.operation].dataContent)).toBe(true)
  })

  test('decide, the floor and the precomputed answers agree with the rule on every request', () => {
    const core = decideCandidate(library, mix)
    const floor = floorCandidate(mix)
    const precomputed = precomputedCandidate(mix)
    expect(mix.map((_, i) => core(i).allowed)).toEqual(truth)
    expect(mix.map((_, i) => floor(i) !== false)).toEqual(truth)
    expect(mix.map((_, i) => precomputed(i))).toEqual(truth)
  })

  test('an allowed capped export carries its caps, in decide and in the floor', () => {
    const core = decideCandidate(library, mix)
    const floor = floorCandidate(mix)
    let capped = 0
    mix.forEach((request, i) => {
      const decision = core(i)
      if (decision.allowed && request.restrictions !== undefined) {
        capped++
        expect(decision.limits).toEqual(request.restrictions)
        expect(floor(i)).toBe(request.restrictions)
      } else if (decision.allowed) expect(floor(i)).toBe(true)
    })
    expect(capped).toBeGreaterThan(50)
  })
})
