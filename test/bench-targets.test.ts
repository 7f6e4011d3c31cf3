import { describe, expect, test } from 'vitest'
import { ratioTarget, renderTargets, type TargetRow, verdictCells } from '../bench/targets.js'

// docs/performance.md's verdict rows: a figure the run lacks must never read as met.
describe('verdict cells', () => {
  test.each<[TargetRow, readonly [string, string]]>([
    [
      ['t', '1.21×', true],
      ['1.21×', '✅ met'],
    ],
    [
      ['t', '1.71×', false],
      ['1.71×', '❌ missed'],
    ],
    [
      ['t', '+0.8 µs ± 0.2', 'recorded'],
      ['+0.8 µs ± 0.2', 'recorded, judged on a quiet machine'],
    ],
    [
      ['t', undefined, true],
      ['not measured', '— not measured'],
    ],
    [
      ['t', undefined, false],
      ['not measured', '— not measured'],
    ],
    [
      ['t', undefined, undefined],
      ['not measured', '— not measured'],
    ],
    [
      ['t', '1.21×', undefined],
      ['1.21×', '— not measured'],
    ],
    // A ratio computed from a missing figure is NaN: not measured, whatever its comparison said.
    [
      ['t', 'NaN×', true],
      ['NaN×', '— not measured'],
    ],
    [
      ['t', 'NaN× (the floor: 0.90×)', 'recorded'],
      ['NaN× (the floor: 0.90×)', '— not measured'],
    ],
  ])('%j reads %j', (row, cells) => {
    expect(verdictCells(row)).toEqual(cells)
  })

  test('a run without a target shows it as not measured in the table', () => {
    const run = {
      machine: 'EPYC (2 cores, 24 GiB)',
      node: 'v20.20.2',
      date: '2026-11-28',
      targets: [['fastify: guard − floor ≤ 1 µs', undefined, undefined] as const],
    }
    expect(renderTargets([run]).split('\n')[2]).toBe(
      '| fastify: guard − floor ≤ 1 µs | not measured | — not measured |',
    )
  })
})

describe('ratio targets', () => {
  test('the median of the per-round ratios, its spread, and the medians of both sides', () => {
    expect(ratioTarget('decide ≤ 1.5×', [30, 33, 28, 40, 29], [20, 20, 20, 20, 20], 1.5)).toEqual([
      'decide ≤ 1.5×',
      '1.50× ± 0.10 (median of 5 rounds; 30.0 ns vs 20.0 ns)',
      true,
    ])
  })

  test('rounds are paired: a slow round slows both sides and leaves the ratio', () => {
    const [, figures, met] = ratioTarget('pipeline ≤ 1.25×', [1300, 2600, 1300], [1000, 2000, 1000], 1.25)
    expect(figures).toBe('1.30× ± 0.00 (median of 3 rounds; 1.30 µs vs 1.00 µs)')
    expect(met).toBe(false)
  })

  test.each<[string, readonly number[] | undefined, readonly number[] | undefined]>([
    ['no candidate rounds', undefined, [1, 2]],
    ['no floor rounds', [1, 2], undefined],
    ['no rounds at all', [], []],
    ['rounds that do not pair', [1, 2, 3], [1, 2]],
    ['a floor of zero', [1, 2], [1, 0]],
  ])('%s: not measured, never met', (_, candidate, floor) => {
    const row = ratioTarget('t', candidate, floor, 1.5)
    expect(row).toEqual(['t', undefined, undefined])
    expect(verdictCells(row)).toEqual(['not measured', '— not measured'])
  })
})
