/**
 * Where to go after sign-in: the `next` parameter, accepted only as a same-origin path (with an
 * optional query) under the pages' path prefix (page-paths.ts) whose route target the front door
 * would route. Anything else — an absolute URL, protocol-relative `//host`, `/\host` (which
 * browsers read as `//host`), a path outside the prefix, escapes in the path, control characters —
 * is ignored, so sign-in can never be used as an open redirect, nor lead out of the server's path.
 */
import { isCanonicalTarget } from '../request/target.js'
import type { PagePaths } from './page-paths.js'

/** Where sign-in leads when no usable `next` is given: a route path, handed out under the prefix. */
export const DEFAULT_NEXT = '/settings/tokens'

/** The longest `next` accepted; an OAuth authorization request fits well within it. */
export const MAX_NEXT_LENGTH = 4096

// Printable ASCII only: no control characters, spaces or non-ASCII that a browser might rewrite.
const PRINTABLE = /^[\x21-\x7e]*$/

/**
 * The `next` value if it is a safe same-origin path under `paths`' prefix, otherwise undefined.
 *
 * @example
 * const paths = new PagePaths('/dap')
 * safeNext('/dap/oauth/authorize?client_id=cli', paths) // '/dap/oauth/authorize?client_id=cli'
 * safeNext('/oauth/authorize', paths)                   // undefined: outside the prefix
 * safeNext('/dap//evil.example/', paths)                // undefined
 * safeNext('https://evil.example/', paths)              // undefined
 */
export function safeNext(next: string | null | undefined, paths: PagePaths): string | undefined {
  if (typeof next !== 'string' || next.length > MAX_NEXT_LENGTH || !PRINTABLE.test(next)) return undefined
  if (!next.startsWith('/') || next.startsWith('//') || next.includes('\\') || next.includes('#'))
    return undefined
  const route = paths.route(next)
  if (route === undefined || !isCanonicalTarget(route) || !isCanonicalTarget(next)) return undefined
  // Belt and braces: resolved against any origin, it must stay on that origin, at that path.
  const base = 'https://origin.invalid'
  const url = new URL(next, base)
  return url.origin === base && `${url.pathname}${url.search}` === next ? next : undefined
}
