import { describe, expect, test } from 'vitest'
import { halfInterquartileRange, median } from '../bench/harness.js'

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
