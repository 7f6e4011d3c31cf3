import { describe, expect, test } from 'vitest'
import {
  baselineCandidate,
  buildMix,
  casbinCandidate,
  caslCandidate,
  cedarCandidate,
  coreCandidate,
  expected,
} from '../bench/decision-peers.js'

// The decision benchmark is only meaningful if every peer encodes the same rule.
describe('decision benchmark peers agree on the whole mix', () => {
  const mix = buildMix()
  const truth = mix.map(expected)

  test('the mix has allowed and denied requests', () => {
    expect(truth.filter(Boolean).length).toBeGreaterThan(50)
    expect(truth.filter((x) => !x).length).toBeGreaterThan(50)
  })

  test.each([
    ['core', async () => coreCandidate(mix)],
    ['baseline', async () => baselineCandidate(mix)],
    ['CASL', async () => caslCandidate(mix)],
    ['casbin', async () => casbinCandidate(mix)],
    ['Cedar', async () => cedarCandidate(mix)],
  ])('%s', async (_name, make) => {
    const run = await make()
    expect(mix.map((_, i) => run(i))).toEqual(truth)
  })
})
