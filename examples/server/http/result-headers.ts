/**
 * The headers a binding sends with a JSON, HTML, asset or redirect result, computed once here so that
 * Express, Fastify and Hono send the same ones. Pages never go to a cache (they carry CSRF tokens
 * and, once, a token value) and are never framed (a framed revoke or consent button could be
 * clicked through an overlay).
 */
import { JSON_CONTENT_TYPE } from '../routes/http-result.js'
import type { ResponseHeaders, RouteResult } from '../routes/route-set.js'

/** The content type of every page. */
export const HTML_CONTENT_TYPE = 'text/html; charset=utf-8'

/** Sent with every page and redirect, after the result's own headers, which cannot weaken them. */
const PAGE_HEADERS: ResponseHeaders = {
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'same-origin',
}

// A file that is the same for every caller and changes only with the package that ships it.
const ASSET_HEADERS: ResponseHeaders = {
  'cache-control': 'public, max-age=3600',
  'x-content-type-options': 'nosniff',
}

/** The results a binding sends itself, as headers and a body (the adapter sends data and denials). */
export type SentResult = Extract<RouteResult, { kind: 'json' | 'html' | 'asset' | 'redirect' }>

/** Header name → value(s), names in lower case, ready for `setHeader` or `Headers.append`. */
export type HeaderList = Readonly<Record<string, string | readonly string[]>>

function lowerCased(headers: ResponseHeaders | undefined): Record<string, string | readonly string[]> {
  const out: Record<string, string | readonly string[]> = {}
  if (headers !== undefined)
    for (const [name, value] of Object.entries(headers)) out[name.toLowerCase()] = value
  return out
}

/**
 * The headers of a JSON, HTML, asset or redirect result, without `content-length` (each framework
 * frames the body itself).
 *
 * @example
 * headersOf({ kind: 'redirect', status: 303, location: '/signin' })
 * // { location: '/signin', 'content-length': '0', 'cache-control': 'no-store', … }
 */
export function headersOf(result: SentResult): HeaderList {
  if (result.kind === 'asset') return { 'content-type': result.contentType, ...ASSET_HEADERS }
  const own = lowerCased(result.headers)
  switch (result.kind) {
    case 'json':
      return { ...own, 'content-type': JSON_CONTENT_TYPE }
    case 'html':
      return { ...own, 'content-type': HTML_CONTENT_TYPE, ...PAGE_HEADERS }
    case 'redirect':
      return { ...own, location: result.location, ...PAGE_HEADERS }
  }
}

/** The body bytes of a JSON, HTML, asset or redirect result. */
export function bodyOf(result: SentResult): string {
  switch (result.kind) {
    case 'json':
      return JSON.stringify(result.body)
    case 'html':
    case 'asset':
      return result.body
    case 'redirect':
      return ''
  }
}
