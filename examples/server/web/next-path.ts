/**
 * Where to go after sign-in: the `next` parameter, accepted only as a same-origin path (with an
 * optional query) that the front door would route. Anything else — an absolute URL,
 * protocol-relative `//host`, `/\host` (which browsers read as `//host`), escapes in the path,
 * control characters — is ignored, so sign-in can never be used as an open redirect.
 */
import { isCanonicalTarget } from '../request/target.js'

/** Where sign-in leads when no usable `next` is given. */
export const DEFAULT_NEXT = '/settings/tokens'

/** The longest `next` accepted; an OAuth authorization request fits well within it. */
export const MAX_NEXT_LENGTH = 4096

// Printable ASCII only: no control characters, spaces or non-ASCII that a browser might rewrite.
const PRINTABLE = /^[\x21-\x7e]*$/

/**
 * The `next` value if it is a safe same-origin path, otherwise undefined.
 *
 * @example
 * safeNext('/oauth/authorize?client_id=cli') // '/oauth/authorize?client_id=cli'
 * safeNext('//evil.example/')                // undefined
 * safeNext('https://evil.example/')          // undefined
 */
export function safeNext(next: string | null | undefined): string | undefined {
  if (typeof next !== 'string' || next.length > MAX_NEXT_LENGTH || !PRINTABLE.test(next)) return undefined
  if (!next.startsWith('/') || next.startsWith('//') || next.includes('\\') || next.includes('#'))
    return undefined
  if (!isCanonicalTarget(next)) return undefined
  // Belt and braces: resolved against any origin, it must stay on that origin, at that path.
  const base = 'https://origin.invalid'
  const url = new URL(next, base)
  return url.origin === base && `${url.pathname}${url.search}` === next ? next : undefined
}
