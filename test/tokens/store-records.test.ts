import { describe, expect, test } from 'vitest'
import { z } from 'zod'
import { TokenStoreError } from '../../src/errors.js'
import { deepFreeze, live, requireStoreNow, validateRecord } from '../../src/tokens/store-records.js'

// The one copy of what the memory and Redis stores do with records: these pin its wording.
const schema = z.object({ id: z.string().min(3, 'too short'), tags: z.array(z.string('not a tag')) })

describe('validateRecord', () => {
  test.each([
    [undefined, 'not a valid demo record (id: too short; tags[1]: not a tag)'],
    ['save', 'cannot save: not a valid demo record (id: too short; tags[1]: not a tag)'],
  ])('names every offending field (action %s)', (action, message) => {
    const bad = { id: 'x', tags: ['a', 7] } as unknown as z.infer<typeof schema>
    const error = (() => {
      try {
        validateRecord(schema, bad, 'demo record', action)
      } catch (caught) {
        return caught
      }
    })()
    expect(error).toBeInstanceOf(TokenStoreError)
    expect((error as Error).message).toBe(message)
  })

  test('returns the parsed record', () => {
    expect(validateRecord(schema, { id: 'abc', tags: [] }, 'demo record')).toEqual({ id: 'abc', tags: [] })
  })
})

describe('deepFreeze and requireStoreNow', () => {
  test('freezes nested values', () => {
    const record = deepFreeze({ a: { b: [1] } })
    expect(Object.isFrozen(record.a.b)).toBe(true)
  })

  test.each([-1, 1.5, Number.NaN, 2 ** 53])('refuses the clock value %s', (now) => {
    expect(() => requireStoreNow(now)).toThrow(TokenStoreError)
  })

  test('accepts epoch milliseconds', () => {
    expect(() => requireStoreNow(1_700_000_000_000)).not.toThrow()
  })
})

describe('live', () => {
  test.each([
    [999, true],
    [1000, false],
  ])('at %s a record retained until 1000 is live: %s', (now, expected) => {
    expect(live({ retainUntil: 1000 }, now) !== undefined).toBe(expected)
  })
})
