import { describe, expect, test } from 'vitest'
import { DeadlineExceeded, withDeadline } from '../../src/authentication/deadline.js'

describe('withDeadline', () => {
  test('passes a prompt answer through', async () => {
    await expect(withDeadline(Promise.resolve(7), 50)).resolves.toBe(7)
  })

  test('passes a prompt rejection through', async () => {
    await expect(withDeadline(Promise.reject(new Error('no')), 50)).rejects.toThrow('no')
  })

  test('rejects a promise that never settles, close to the deadline', async () => {
    const start = performance.now()
    await expect(withDeadline(new Promise(() => {}), 30)).rejects.toBeInstanceOf(DeadlineExceeded)
    const elapsed = performance.now() - start
    expect(elapsed).toBeGreaterThanOrEqual(29)
    expect(elapsed).toBeLessThan(500)
  })

  test('many pending lookups each fail on their own deadline', async () => {
    const results = await Promise.allSettled([
      withDeadline(new Promise(() => {}), 20),
      withDeadline(new Promise((resolve) => setTimeout(resolve, 5, 'late but in time')), 200),
      withDeadline(new Promise(() => {}), 40),
    ])
    expect(results.map((r) => r.status)).toEqual(['rejected', 'fulfilled', 'rejected'])
  })
})
