import { describe, expect, test } from 'vitest'
import { RecordCache } from '../../../adapters/redis/record-cache.js'

describe('RecordCache (bounded LRU)', () => {
  test('keeps at most its capacity, evicting the least recently used', () => {
    const cache = new RecordCache<string>(2)
    cache.set('a', 'A', 1)
    cache.set('b', 'B', 2)
    expect(cache.get('a')).toEqual({ value: 'A', fetchedAt: 1 }) // a is now the most recent
    cache.set('c', 'C', 3)
    expect(cache.size).toBe(2)
    expect(cache.get('b')).toBeUndefined()
    expect(cache.get('a')?.value).toBe('A')
    expect(cache.get('c')?.value).toBe('C')
  })

  test('replaces an entry in place without evicting another', () => {
    const cache = new RecordCache<string>(2)
    cache.set('a', 'A', 1)
    cache.set('b', 'B', 2)
    cache.set('a', 'A2', 3)
    expect(cache.size).toBe(2)
    expect(cache.get('a')).toEqual({ value: 'A2', fetchedAt: 3 })
    expect(cache.get('b')?.value).toBe('B')
  })

  test('deletes, clears, and stores nothing at capacity 0', () => {
    const cache = new RecordCache<string>(3)
    cache.set('a', 'A', 1)
    cache.set('b', 'B', 1)
    cache.delete('a')
    expect(cache.get('a')).toBeUndefined()
    cache.clear()
    expect(cache.size).toBe(0)
    const none = new RecordCache<string>(0)
    none.set('a', 'A', 1)
    expect(none.get('a')).toBeUndefined()
  })
})
