/**
 * The queue of password checks (examples/server/limits/hash-queue.ts): at most `concurrency` at once,
 * waiting checks taken in turn per client network and in arrival order within one, a flood from one
 * network never ahead of another network's check by more than what is already running, every check
 * run once, failures passed on. Order and counts, never time: they hold on a busy machine.
 */
import { describe, expect, test } from 'vitest'
import { HashQueue } from '../../examples/server/limits/hash-queue.js'
import { networkOf } from '../../examples/server/limits/networks.js'

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

  test('waiting checks run in turn per network, and in arrival order within one', async () => {
    const queue = new HashQueue(1)
    const started: string[] = []
    const gates = new Map<string, ReturnType<typeof gate>>()
    const results = new Map<string, Promise<string>>()
    // The queue is full (Z runs) when the others arrive: A's three first, then B's two, then C's one.
    for (const [name, network] of [
      ['Z', '192.0.2.1'],
      ['A0', '203.0.113.1'],
      ['A1', '203.0.113.1'],
      ['A2', '203.0.113.1'],
      ['B0', '198.51.100.1'],
      ['B1', '198.51.100.1'],
      ['C0', '2001:db8:c::/64'],
    ] as const) {
      const each = gate(started, name)
      gates.set(name, each)
      results.set(name, queue.run(network, each.work))
    }
    await Promise.resolve()
    expect(started).toEqual(['Z'])
    expect(queue.pending).toBe(7)
    // Each check that ends lets exactly the next one start.
    for (let ended = 0; ended < 7; ended++) {
      const name = started[ended]!
      gates.get(name)!.open()
      expect(await results.get(name)).toBe(name)
      await new Promise((resolve) => setImmediate(resolve))
      expect(started).toHaveLength(Math.min(ended + 2, 7))
      expect(queue.pending).toBe(6 - ended)
    }
    expect(started).toEqual(['Z', 'A0', 'B0', 'C0', 'A1', 'B1', 'A2'])
  })

  test.each([2, 16, 200])(
    'a flood of %i checks from rotating addresses of one /64 is one network: another network waits for one of its checks',
    async (size) => {
      const queue = new HashQueue(2)
      const started: string[] = []
      // Each flood check from an address of its own, counted in its network as the server does.
      const flood = Array.from({ length: size }, (_, i) => gate(started, `f${i}`))
      const floodResults = flood.map((each, i) =>
        queue.run(networkOf(`2001:db8:66:1:${i.toString(16)}::1`, 64), each.work),
      )
      const other = gate(started, 'other')
      const otherResult = queue.run(networkOf('198.51.100.7', 64), other.work)
      await Promise.resolve()
      expect(started).toEqual(['f0', 'f1'])
      expect(queue.pending).toBe(size + 1)
      flood[0]!.open()
      await floodResults[0]
      await new Promise((resolve) => setImmediate(resolve))
      // Ahead of every flood check still waiting, however many.
      expect(started).toEqual(['f0', 'f1', 'other'])
      other.open()
      expect(await otherResult).toBe('other')
      for (const each of flood) each.open()
      expect(await Promise.all(floodResults)).toEqual(flood.map((_, i) => `f${i}`))
      expect(started).toHaveLength(size + 1)
      expect(queue.pending).toBe(0)
    },
  )

  test.each([1, 2, 3])(
    'with concurrency %i: never more at once, each check run exactly once',
    async (concurrency) => {
      const queue = new HashQueue(concurrency)
      let running = 0
      let most = 0
      const calls = new Map<string, number>()
      const names = ['192.0.2.1', '192.0.2.2', '2001:db8:1::/64'].flatMap((network) =>
        Array.from({ length: 4 }, (_, i) => [network, `${network}#${i}`] as const),
      )
      const results = names.map(([network, name]) =>
        queue.run(network, async () => {
          calls.set(name, (calls.get(name) ?? 0) + 1)
          running++
          most = Math.max(most, running)
          await new Promise((resolve) => setImmediate(resolve))
          running--
          return name
        }),
      )
      expect(queue.pending).toBe(names.length)
      expect(await Promise.all(results)).toEqual(names.map(([, name]) => name))
      expect(most).toBe(concurrency)
      expect([...calls.values()]).toEqual(names.map(() => 1))
      expect(queue.pending).toBe(0)
    },
  )
})
