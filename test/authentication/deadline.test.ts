import { afterEach, describe, expect, test, vi } from 'vitest'
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

  test('an answer that arrived while the event loop stalled past the deadline wins', async () => {
    // The answer is due at 30 ms, the deadline at 20; the loop is blocked until 100 ms. When it
    // turns again both are due, and the sweep (due first) must not throw the answer away.
    const answer = new Promise((resolve) => setTimeout(resolve, 30, 'arrived'))
    const lookup = withDeadline(answer, 20)
    const stalledUntil = performance.now() + 100
    while (performance.now() < stalledUntil) {
      // the stall
    }
    await expect(lookup).resolves.toBe('arrived')
  })
})

// On a fake clock: the sweep's timing, and that it leaves no timer behind.
describe('withDeadline on a fake clock', () => {
  afterEach(() => {
    vi.useRealTimers()
    vi.unstubAllGlobals()
  })

  const fakeClock = () =>
    vi.useFakeTimers({
      toFake: ['setInterval', 'clearInterval', 'setTimeout', 'clearTimeout', 'performance'],
    })
  const never = () => new Promise<never>(() => {})
  // The fake clock runs a zero-delay timer set during a tick 1 ms later: the turn the sweep gives
  // an answer that may have arrived unread.
  const TURN = 1

  test('the error told to the host names the deadline', async () => {
    fakeClock()
    const lookup = withDeadline(never(), 10)
    vi.advanceTimersByTime(10 + TURN)
    const error = await lookup.catch((thrown: unknown) => thrown)
    expect(error).toBeInstanceOf(DeadlineExceeded)
    expect(error).toMatchObject({ name: 'DeadlineExceeded', message: 'deadline exceeded' })
  })

  test('a lookup fails at the sweep that reaches its deadline, not one sweep later', async () => {
    fakeClock()
    let failed = false
    withDeadline(never(), 10).catch(() => {
      failed = true
    })
    vi.advanceTimersByTime(9)
    await Promise.resolve()
    expect(failed).toBe(false)
    vi.advanceTimersByTime(1)
    await Promise.resolve()
    expect(failed).toBe(false) // the sweep at 10 gives an arrived answer one more turn
    vi.advanceTimersByTime(TURN)
    await Promise.resolve()
    expect(failed).toBe(true)
  })

  test('one sweep serves every pending lookup, and stops once none is left', async () => {
    fakeClock()
    const first = withDeadline(never(), 10).catch(() => 'refused')
    const second = withDeadline(never(), 10).catch(() => 'refused')
    expect(vi.getTimerCount()).toBe(1)
    vi.advanceTimersByTime(10 + TURN)
    expect(await Promise.all([first, second])).toEqual(['refused', 'refused'])
    expect(vi.getTimerCount()).toBe(0)
  })

  test('a settled lookup leaves no timer behind after the next sweep', async () => {
    fakeClock()
    await withDeadline(Promise.resolve(1), 1000)
    vi.advanceTimersByTime(10)
    expect(vi.getTimerCount()).toBe(0)
  })

  test('works where timers are plain numbers (Workers, browsers), which have no unref', async () => {
    let sweep: (() => void) | undefined
    let cleared: unknown
    vi.stubGlobal('setInterval', (callback: () => void) => {
      sweep = callback
      return 7
    })
    vi.stubGlobal('clearInterval', (handle: unknown) => {
      cleared = handle
    })
    await expect(withDeadline(Promise.resolve('ok'), 50)).resolves.toBe('ok')
    // The next sweep finds nothing pending and stops the timer it was given.
    sweep?.()
    expect(cleared).toBe(7)
  })
})
