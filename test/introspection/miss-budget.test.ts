/**
 * The miss budgets' token buckets on a simulated clock: per network, in total, the reserve kept for
 * quiet networks, refilling, a clock that goes back or is not a number, and the bound on networks.
 */
import { describe, expect, test } from 'vitest'
import { MissBudget, type MissBudgetLimits } from '../../src/introspection/miss-budget.js'

const LIMITS: MissBudgetLimits = { perNetwork: 3, total: 10, windowMs: 60_000, maxNetworks: 100 }
const T0 = 1_000_000

type Step = readonly [network: string, at: number, expected: 'ok' | number]

// Each row: a sequence of misses (network, time) and what each answers: ok, or the Retry-After in
// ms rounded up to a second.
const ROWS: ReadonlyArray<readonly [string, Partial<MissBudgetLimits>, readonly Step[]]> = [
  [
    'a network spends its own budget, then waits for one miss to refill',
    {},
    [
      ['a', T0, 'ok'],
      ['a', T0, 'ok'],
      ['a', T0, 'ok'],
      ['a', T0, 20_000],
      ['a', T0 + 19_999, 1000],
      ['a', T0 + 20_000, 'ok'],
      ['a', T0 + 20_000, 20_000],
    ],
  ],
  [
    'another network keeps its own budget',
    {},
    [
      ['a', T0, 'ok'],
      ['a', T0, 'ok'],
      ['a', T0, 'ok'],
      ['a', T0, 20_000],
      ['b', T0, 'ok'],
    ],
  ],
  [
    'the total refuses every network once spent, past the reserve',
    { perNetwork: 4, total: 10 },
    [
      ['a', T0, 'ok'],
      ['a', T0, 'ok'],
      ['a', T0, 'ok'],
      ['a', T0, 'ok'],
      ['b', T0, 'ok'],
      ['b', T0, 'ok'],
      ['b', T0, 'ok'],
      ['b', T0, 'ok'],
      // 2 left, 1 reserved: c is quiet (full), so it may take the reserve; d then finds none at all.
      ['c', T0, 'ok'],
      ['c', T0, 'ok'],
      ['d', T0, 6000],
    ],
  ],
  [
    'the reserve is kept from a network that has spent half its budget',
    { perNetwork: 4, total: 10 },
    [
      ['a', T0, 'ok'],
      ['a', T0, 'ok'],
      ['a', T0, 'ok'],
      ['a', T0, 'ok'],
      ['b', T0, 'ok'],
      ['b', T0, 'ok'],
      ['b', T0, 'ok'],
      ['c', T0, 'ok'],
      ['c', T0, 'ok'],
      // 1 left in total, the reserve: b (1 of 4 left) may not take it, c (2 of 4, half) may.
      ['b', T0, 6000],
      ['c', T0, 'ok'],
    ],
  ],
  [
    'a network below half waits for the total to refill past the reserve',
    { perNetwork: 4, total: 10 },
    [
      ['a', T0, 'ok'],
      ['a', T0, 'ok'],
      ['a', T0, 'ok'],
      ['b', T0, 'ok'],
      ['b', T0, 'ok'],
      ['b', T0, 'ok'],
      ['c', T0, 'ok'],
      ['c', T0, 'ok'],
      ['c', T0, 'ok'],
      // a has 1 of 4 left (below half); the total has 1 left, which is the reserve.
      ['a', T0, 6000],
      ['d', T0, 'ok'],
      ['d', T0, 6000],
    ],
  ],
  [
    'a clock that goes back refills nothing',
    {},
    [
      ['a', T0, 'ok'],
      ['a', T0, 'ok'],
      ['a', T0, 'ok'],
      ['a', T0 - 60_000, 20_000],
    ],
  ],
  [
    'a clock that is not a number refuses for a window',
    {},
    [
      ['a', Number.NaN, 60_000],
      ['a', T0, 'ok'],
    ],
  ],
  [
    'a full bucket does not overfill',
    {},
    [
      ['a', T0, 'ok'],
      ['a', T0 + 3_600_000, 'ok'],
      ['a', T0 + 3_600_000, 'ok'],
      ['a', T0 + 3_600_000, 'ok'],
      ['a', T0 + 3_600_000, 20_000],
    ],
  ],
]

describe('MissBudget', () => {
  test.each(ROWS)('%s', (_name, limits, steps) => {
    const budget = new MissBudget({ ...LIMITS, ...limits })
    const answers = steps.map(([network, at]) => {
      const verdict = budget.take(network, at)
      return verdict.ok ? 'ok' : Math.ceil(verdict.retryAfterMs / 1000) * 1000
    })
    expect(answers).toEqual(steps.map(([, , expected]) => expected))
  })

  test('tracks at most maxNetworks; the least recently seen is forgotten and starts afresh', () => {
    const budget = new MissBudget({ ...LIMITS, total: 1000, maxNetworks: 2 })
    for (let i = 0; i < 3; i++) budget.take('a', T0)
    expect(budget.take('a', T0).ok).toBe(false)
    budget.take('b', T0)
    budget.take('a', T0) // a is the most recent again
    budget.take('c', T0) // b is forgotten, not a
    expect(budget.networks).toBe(2)
    expect(budget.take('a', T0).ok).toBe(false)
    budget.take('d', T0) // now c goes
    budget.take('e', T0) // and a
    expect(budget.take('a', T0).ok).toBe(true)
    expect(budget.networks).toBe(2)
  })
})
