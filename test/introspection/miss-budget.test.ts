/**
 * The miss budgets' token buckets on a simulated clock: per network, per block, in total, the
 * reserve kept for quiet networks that showed an active token, refilling, a clock that goes back or
 * is not a number, and the bounds on what is tracked.
 */
import { describe, expect, test } from 'vitest'
import { MissBudget, type MissBudgetLimits, type MissSource } from '../../src/introspection/miss-budget.js'

const LIMITS: MissBudgetLimits = {
  perNetwork: 3,
  perBlock: 100,
  total: 10,
  windowMs: 60_000,
  maxNetworks: 100,
}
const T0 = 1_000_000

// A network alone, or 'network@block'.
type Step = readonly [source: string, at: number, expected: 'ok' | 'active' | number]

function sourceOf(text: string): MissSource {
  const [network, block] = text.split('@') as [string, string | undefined]
  return { network, block }
}

// Each row: a sequence of steps (source, time) and what each answers: a miss answers ok, or the
// Retry-After in ms rounded up to a second; 'active' notes that the network showed an active token.
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
      // 2 left, 1 reserved: c showed an active token and is quiet (full), so it may take the
      // reserve; d then finds none at all.
      ['c', T0, 'active'],
      ['c', T0, 'ok'],
      ['c', T0, 'ok'],
      ['d', T0, 12_000],
    ],
  ],
  [
    'the reserve is kept from a network that has spent half its budget',
    { perNetwork: 4, total: 10 },
    [
      ['b', T0, 'active'],
      ['c', T0, 'active'],
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
      ['a', T0, 'active'],
      ['a', T0, 6000],
      ['d', T0, 'active'],
      ['d', T0, 'ok'],
      ['d', T0, 6000],
    ],
  ],
  [
    'the reserve is refused to a network never seen active, and to one seen active a window ago',
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
      ['c', T0, 'ok'],
      // 1 left, the reserve: new (and full) networks may not take it, however many.
      ['d', T0, 6000],
      ['e', T0, 6000],
      ['f', T0 - 60_000, 'active'],
      ['f', T0, 6000],
      // An active note on a clock that is not a number notes nothing.
      ['g', Number.NaN, 'active'],
      ['g', T0, 6000],
      ['h', T0, 'active'],
      ['h', T0, 'ok'],
    ],
  ],
  [
    'a block bounds all its networks together, with a Retry-After of its own',
    { perNetwork: 2, perBlock: 3, total: 100 },
    [
      ['n1@b', T0, 'ok'],
      ['n1@b', T0, 'ok'],
      ['n2@b', T0, 'ok'],
      // The block is spent: a fresh network in it waits for the block (60 s / 3 per miss).
      ['n3@b', T0, 20_000],
      ['n4@b', T0, 20_000],
      // The refused misses spent nothing: n3 has its budget when the block refills.
      ['n5@other', T0, 'ok'],
      ['n3@b', T0 + 20_000, 'ok'],
      ['n3@b', T0 + 20_000, 20_000],
      // A network's own budget is checked first (n1 has 2/3 of a miss back, the block none).
      ['n1@b', T0 + 20_000, 10_000],
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
    const answers = steps.map(([source, at, expected]) => {
      if (expected === 'active') {
        budget.sawActive(source, at)
        return 'active'
      }
      const verdict = budget.take(sourceOf(source), at)
      return verdict.ok ? 'ok' : Math.ceil(verdict.retryAfterMs / 1000) * 1000
    })
    expect(answers).toEqual(steps.map(([, , expected]) => expected))
  })

  test('tracks at most maxNetworks; the least recently seen is forgotten and starts afresh', () => {
    const budget = new MissBudget({ ...LIMITS, total: 1000, maxNetworks: 2 })
    const take = (network: string) => budget.take({ network }, T0).ok
    for (let i = 0; i < 3; i++) take('a')
    expect(take('a')).toBe(false)
    take('b')
    take('a') // a is the most recent again
    take('c') // b is forgotten, not a
    expect(budget.networks).toBe(2)
    expect(take('a')).toBe(false)
    take('d') // now c goes
    take('e') // and a
    expect(take('a')).toBe(true)
    expect(budget.networks).toBe(2)
  })

  test('tracks at most maxNetworks blocks; a forgotten block starts afresh', () => {
    const budget = new MissBudget({ ...LIMITS, perBlock: 1, total: 1000, maxNetworks: 2 })
    const take = (network: string, block: string) => budget.take({ network, block }, T0).ok
    expect(take('a1', 'A')).toBe(true)
    expect(take('a2', 'A')).toBe(false)
    take('b1', 'B')
    take('c1', 'C') // A is forgotten
    expect(budget.blocks).toBe(2)
    expect(take('a3', 'A')).toBe(true)
    expect(budget.blocks).toBe(2)
  })

  test('remembers at most maxNetworks networks seen active; the least recently seen is forgotten', () => {
    const budget = new MissBudget({ perNetwork: 4, perBlock: 4, total: 10, windowMs: 60_000, maxNetworks: 2 })
    for (let i = 0; i < 9; i++) budget.take({ network: `spent${i}` }, T0)
    // The total holds its reserve only: which networks may take it?
    budget.sawActive('a', T0)
    budget.sawActive('b', T0)
    budget.sawActive('a', T0) // a is the most recent again
    budget.sawActive('c', T0) // b is forgotten, not a
    expect(budget.activeNetworks).toBe(2)
    expect(budget.take({ network: 'b' }, T0).ok).toBe(false)
    expect(budget.take({ network: 'a' }, T0).ok).toBe(true)
  })
})
