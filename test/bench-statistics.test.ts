import { describe, expect, test } from 'vitest'
import { halfInterquartileRange, median } from '../bench/harness.js'
import { type Sample, summarize } from '../bench/http.js'

// docs/performance.md states each HTTP cost with this spread; a wrong spread would call a noisy
// figure settled (or a settled one noisy).
describe('bench statistics', () => {
  test.each([
    [[5], 5],
    [[3, 1, 2], 2],
    [[4, 1, 3, 2], 2.5],
  ])('median of %j is %d', (values, expected) => {
    expect(median(values)).toBe(expected)
  })

  test.each([
    // Quartiles interpolated linearly: 2 and 4.
    [[1, 2, 3, 4, 5], 1],
    // Order does not matter.
    [[5, 1, 4, 2, 3], 1],
    // One outlying round does not set the spread.
    [[0, 0, 0, 0, 100], 0],
    [[-3, 10, 10, 10, 10, 10, 400], 0],
    // Quartiles between samples: 1.75 and 3.25 of [1, 2, 3, 4].
    [[1, 2, 3, 4], 0.75],
    // One round, no spread to speak of.
    [[7], 0],
  ])('half the interquartile range of %j is %d', (values, expected) => {
    expect(halfInterquartileRange(values)).toBeCloseTo(expected, 12)
  })

  test('seven rounds as the bench takes them', () => {
    // Sorted: -4, -1, 2, 3, 5, 9, 30; quartiles at 1.5 and 4.5 → 0.5 and 7.
    expect(halfInterquartileRange([3, -1, 30, 9, -4, 5, 2])).toBeCloseTo(3.25, 12)
  })
})

describe('bench HTTP comparisons', () => {
  const sample = (cpuMicrosPerRequest: number, requestsPerSecond = 1000): Sample => ({
    requestsPerSecond,
    p99Ms: 1,
    cpuMicrosPerRequest,
    non2xx: 0,
  })
  const rounds = (cpu: number[], rps?: number[]) => cpu.map((c, k) => sample(c, rps?.[k]))

  // Round 1 ran while the machine was slow for every route; in round 2 only `guarded` was disturbed.
  const samples = new Map<string, Sample[]>([
    ['open', rounds([50, 150, 60], [1000, 500, 1000])],
    ['pass', rounds([51, 151, 61])],
    ['guarded', rounds([55, 155, 200], [900, 450, 100])],
    ['floor', rounds([53, 153, 63])],
  ])

  test('a cost is the median of the per-round differences, not the difference of the medians', () => {
    const result = summarize('fastify', samples)
    // The medians alone (60 and 155) would put the guard at 95 µs.
    expect(result.routes.find((r) => r.route === 'open')?.cpuMicrosPerRequest).toBe(60)
    expect(result.routes.find((r) => r.route === 'guarded')?.cpuMicrosPerRequest).toBe(155)
    expect(result.costs.guarded?.micros).toBe(5)
    expect(result.costs.pass?.micros).toBe(1)
    expect(result.costs.floor?.micros).toBe(3)
    // guarded − floor in each round: [2, 2, 137].
    expect(result.guardOverFloor).toEqual({ micros: 2, spreadMicros: expect.closeTo(33.75, 12) })
  })

  test('a cost carries the spread of its per-round differences', () => {
    const result = summarize('fastify', samples)
    // [5, 5, 140]: quartiles 5 and 72.5.
    expect(result.costs.guarded?.spreadMicros).toBeCloseTo(33.75, 12)
    expect(result.costs.pass?.spreadMicros).toBe(0)
    expect(result.costs).not.toHaveProperty('open')
  })

  test('a ratio is the median of the per-round throughput ratios', () => {
    const result = summarize('fastify', samples)
    // [0.9, 0.9, 0.1]
    expect(result.guardedVsOpen).toBeCloseTo(0.9, 12)
    expect(result.guardedVsBearer).toBeUndefined()
    expect(result.costs).not.toHaveProperty('bearer')
  })

  test('the bearer plugin is compared round by round too', () => {
    const result = summarize(
      'hono',
      new Map([...samples, ['bearer', rounds([120, 220, 130], [800, 400, 800])]]),
    )
    // guarded ÷ bearer: [1.125, 1.125, 0.125]; open ÷ bearer: [1.25, 1.25, 1.25].
    expect(result.guardedVsBearer).toBeCloseTo(1.125, 12)
    expect(result.openVsBearer).toBeCloseTo(1.25, 12)
    expect(result.costs.bearer?.micros).toBe(70)
  })
})
