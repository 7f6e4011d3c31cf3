import { describe, expect, test } from 'vitest'
import {
  decodePageToken,
  encodePageToken,
  MAX_RESULTS_DETAIL,
  paginate,
  readListingParams,
} from '../../examples/server/api/listing.js'

function detailOf(query: string, body?: Record<string, unknown>): string | undefined {
  const result = readListingParams(new URLSearchParams(query), body, 'acme')
  if (result.ok) return undefined
  const answer = result.result
  if (answer.kind !== 'json') throw new Error('expected a JSON answer')
  return (answer.body as { error: { detail: string } }).error.detail
}

describe('listing parameters', () => {
  test('default 100, from the query or the JSON body', () => {
    expect(readListingParams(new URLSearchParams(), undefined, 'acme')).toEqual({
      ok: true,
      value: { maxResults: 100, after: undefined },
    })
    expect(readListingParams(new URLSearchParams('maxResults=1000'), undefined, 'acme')).toMatchObject({
      value: { maxResults: 1000 },
    })
    expect(readListingParams(new URLSearchParams(), { maxResults: 1 }, 'acme')).toMatchObject({
      value: { maxResults: 1 },
    })
  })

  test.each(['0', '1001', '1.5', 'abc', '', '-1', '+5', '05', '1e2', ' 5'])(
    'maxResults=%j is refused',
    (value) => {
      expect(detailOf(`maxResults=${encodeURIComponent(value)}`)).toBe(MAX_RESULTS_DETAIL)
    },
  )

  test.each([0, 1001, 1.5, '5', null, true, -3])('a JSON maxResults of %j is refused', (value) => {
    expect(detailOf('', { maxResults: value })).toBe(MAX_RESULTS_DETAIL)
  })

  test('a repeated or doubly given parameter is refused, not guessed at', () => {
    expect(detailOf('maxResults=1&maxResults=2')).toBe(MAX_RESULTS_DETAIL)
    expect(detailOf('maxResults=1', { maxResults: 1 })).toBe(
      'maxResults must be given in the query or the body, not both',
    )
    expect(detailOf('', { maxResult: 1 })).toBe('the JSON body may only hold maxResults and pageToken')
  })

  test('page tokens belong to one listing and must be canonical', () => {
    const token = encodePageToken('acme', 'claims')
    expect(decodePageToken(token, 'acme')).toBe('claims')
    expect(decodePageToken(token, 'bob')).toBeUndefined()
    expect(decodePageToken(`${token}=`, 'acme')).toBeUndefined()
    expect(decodePageToken('not a token', 'acme')).toBeUndefined()
    expect(detailOf('pageToken=garbage')).toBe('pageToken is not a page token of this listing')
    expect(readListingParams(new URLSearchParams(), { pageToken: token }, 'acme')).toMatchObject({
      value: { after: 'claims' },
    })
    expect(readListingParams(new URLSearchParams('pageToken='), undefined, 'acme')).toMatchObject({
      value: { after: undefined },
    })
  })
})

describe('paginate', () => {
  const items = ['a', 'b', 'c', 'd', 'e'].map((name) => ({ name }))

  test('walks every item exactly once, with null after the last page', () => {
    const seen: string[] = []
    let after: string | undefined
    for (let pages = 0; pages < 10; pages++) {
      const page = paginate(items, 'acme', { maxResults: 2, after })
      seen.push(...page.items.map((item) => item.name))
      if (page.nextPageToken === null) break
      after = decodePageToken(page.nextPageToken, 'acme')
    }
    expect(seen).toEqual(['a', 'b', 'c', 'd', 'e'])
  })

  test('a page that ends the list exactly has no next token', () => {
    expect(paginate(items, 'acme', { maxResults: 5, after: undefined }).nextPageToken).toBeNull()
    expect(paginate(items, 'acme', { maxResults: 2, after: 'c' })).toEqual({
      items: [{ name: 'd' }, { name: 'e' }],
      nextPageToken: null,
    })
  })

  test('a position past a removed item still continues after it', () => {
    expect(paginate(items, 'acme', { maxResults: 1, after: 'bb' }).items).toEqual([{ name: 'c' }])
  })
})
