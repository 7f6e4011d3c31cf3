/**
 * The queue of password checks (examples/server/limits/hash-queue.ts): at most `concurrency` at once,
 * waiting checks taken in turn per client address, failures passed on.
 */
import { describe, expect, test } from 'vitest'
import { HashQueue } from '../../examples/server/limits/hash-queue.js'

// A task that finishes when the test says so, recording when it started.
function gate(started: string[], name: string) {
  let open!: () => void
  const done = new Promise<void>((resolve) => {
    open = resolve
  })
  return {
    open,
    work: async () => {
      started.push(name)
      await done
      return name
    },
  }
}

describe('HashQueue', () => {
  test('runs at most `concurrency` at once, and serves addresses in turn', async () => {
    const queue = new HashQueue(2)
    const started: string[] = []
    const flood = Array.from({ length: 6 }, (_, i) => gate(started, `a${i}`))
    const results = flood.map((each) => queue.run('203.0.113.1', each.work))
    const other = gate(started, 'b0')
    const otherResult = queue.run('198.51.100.1', other.work)
    await Promise.resolve()
    expect(started).toEqual(['a0', 'a1'])
    expect(queue.pending).toBe(7)
    // One flood check ends: the other address goes next, ahead of the four still waiting.
    flood[0]!.open()
    await results[0]
    await new Promise((resolve) => setImmediate(resolve))
    expect(started).toEqual(['a0', 'a1', 'b0'])
    other.open()
    expect(await otherResult).toBe('b0')
    for (const each of flood) each.open()
    expect(await Promise.all(results)).toEqual(['a0', 'a1', 'a2', 'a3', 'a4', 'a5'])
    expect(queue.pending).toBe(0)
  })

  test('a failed check is passed on and frees its slot', async () => {
    const queue = new HashQueue(1)
    await expect(queue.run(undefined, () => Promise.reject(new Error('scrypt failed')))).rejects.toThrow(
      'scrypt failed',
    )
    expect(await queue.run(undefined, async () => 'next')).toBe('next')
  })
})
