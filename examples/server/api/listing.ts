/**
 * Listing parameters and pages (pure): `maxResults` and `pageToken`, read from the query string or
 * a JSON body (the contract's JavaScript example sends `{"maxResults": N}` with its GET), and
 * keyset pagination over datasets sorted by name.
 */
import { invalidParameter } from '../routes/http-result.js'
import type { RouteResult } from '../routes/route-set.js'

/** Results per page unless the caller asks otherwise. */
export const DEFAULT_MAX_RESULTS = 100
/** The most results a page may hold. */
export const MAX_MAX_RESULTS = 1000

/** The one answer to every bad `maxResults`, wherever it came from. */
export const MAX_RESULTS_DETAIL = `maxResults must be an integer from 1 to ${MAX_MAX_RESULTS}`
const PAGE_TOKEN_DETAIL = 'pageToken is not a page token of this listing'
const BODY_KEYS = ['maxResults', 'pageToken'] as const

/** What a page request asks for. */
export interface ListingParams {
  readonly maxResults: number
  /** The name of the last dataset of the previous page. */
  readonly after: string | undefined
}

type Parsed<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly result: RouteResult }

const fail = (detail: string): Parsed<never> => ({ ok: false, result: invalidParameter(detail) })

// Digits only, no sign, no leading zero, no exponent: "1e2", "+5", "05" and "1.0" are all refused.
const DECIMAL = /^[1-9][0-9]{0,3}$/

/**
 * Reads `maxResults` from the query string: absent, or exactly one decimal integer in range.
 *
 * @example
 * parseMaxResults(new URLSearchParams('maxResults=50')) // { ok: true, value: 50 }
 */
export function parseMaxResults(query: URLSearchParams): Parsed<number | undefined> {
  const values = query.getAll('maxResults')
  if (values.length === 0) return { ok: true, value: undefined }
  const [text] = values
  if (values.length > 1 || text === undefined || !DECIMAL.test(text) || Number(text) > MAX_MAX_RESULTS) {
    return fail(MAX_RESULTS_DETAIL)
  }
  return { ok: true, value: Number(text) }
}

/**
 * Reads the listing parameters from the query and the parsed JSON body. A parameter given in both
 * places is refused rather than guessed at.
 *
 * @example
 * readListingParams(new URLSearchParams(), { maxResults: 2 }, 'acme') // { ok: true, value: { maxResults: 2, after: undefined } }
 */
export function readListingParams(
  query: URLSearchParams,
  body: Readonly<Record<string, unknown>> | undefined,
  owner: string,
): Parsed<ListingParams> {
  if (
    body !== undefined &&
    Object.keys(body).some((key) => !(BODY_KEYS as readonly string[]).includes(key))
  ) {
    return fail('the JSON body may only hold maxResults and pageToken')
  }
  const fromQuery = parseMaxResults(query)
  if (!fromQuery.ok) return fromQuery
  let maxResults = fromQuery.value
  if (body !== undefined && Object.hasOwn(body, 'maxResults')) {
    if (maxResults !== undefined) return fail('maxResults must be given in the query or the body, not both')
    const value = body.maxResults
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > MAX_MAX_RESULTS) {
      return fail(MAX_RESULTS_DETAIL)
    }
    maxResults = value
  }

  const queryTokens = query.getAll('pageToken')
  if (queryTokens.length > 1) return fail(PAGE_TOKEN_DETAIL)
  let token = queryTokens[0]
  if (body !== undefined && Object.hasOwn(body, 'pageToken')) {
    if (token !== undefined) return fail('pageToken must be given in the query or the body, not both')
    if (typeof body.pageToken !== 'string') return fail(PAGE_TOKEN_DETAIL)
    token = body.pageToken
  }
  // An empty token is the first page, as clients that always send the parameter expect.
  let after: string | undefined
  if (token !== undefined && token !== '') {
    after = decodePageToken(token, owner)
    if (after === undefined) return fail(PAGE_TOKEN_DETAIL)
  }
  return { ok: true, value: { maxResults: maxResults ?? DEFAULT_MAX_RESULTS, after } }
}

const TOKEN_VERSION = 'v1'

/**
 * The opaque token of the page after `lastName` in `owner`'s listing. It names a position, not an
 * offset, so datasets added or hidden meanwhile never make a page repeat or skip an entry.
 */
export function encodePageToken(owner: string, lastName: string): string {
  return Buffer.from(`${TOKEN_VERSION}:${owner}/${lastName}`, 'utf8').toString('base64url')
}

/** The position a page token names, or `undefined` for a token of another listing or none at all. */
export function decodePageToken(token: string, owner: string): string | undefined {
  if (!/^[A-Za-z0-9_-]{1,400}$/.test(token)) return undefined
  const match = /^v1:([^/]+)\/([^/]+)$/.exec(Buffer.from(token, 'base64url').toString('utf8'))
  if (match === null || match[1] !== owner) return undefined
  const after = match[2]!
  // Only a canonical encoding is a token this server issued.
  return encodePageToken(owner, after) === token ? after : undefined
}

/** One page of a listing sorted by name. */
export interface Page<T> {
  readonly items: readonly T[]
  /** `null` on the last page. */
  readonly nextPageToken: string | null
}

/**
 * Cuts the page that follows `after` from items sorted by name (code-unit order).
 *
 * @example
 * paginate([{ name: 'a' }, { name: 'b' }], 'acme', { maxResults: 1, after: undefined })
 * // { items: [{ name: 'a' }], nextPageToken: encodePageToken('acme', 'a') }
 */
export function paginate<T extends { readonly name: string }>(
  sorted: readonly T[],
  owner: string,
  params: ListingParams,
): Page<T> {
  const { after } = params
  const start = after === undefined ? 0 : sorted.findIndex((item) => item.name > after)
  const rest = start === -1 ? [] : sorted.slice(start)
  const items = rest.slice(0, params.maxResults)
  const last = items.at(-1)
  return {
    items,
    nextPageToken:
      rest.length > items.length && last !== undefined ? encodePageToken(owner, last.name) : null,
  }
}
