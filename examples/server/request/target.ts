/**
 * The check every request passes before any router sees it. Express matches raw paths while
 * Fastify and Hono decode percent-escapes (and the URL parser under Hono resolves `..`), so the
 * same odd target could reach a route on one framework and not on another. Every name the server
 * routes on is plain ASCII (seed/shapes.ts), so any target outside that alphabet, or with a `.`
 * or `..` segment, an empty segment or a percent-escape, is refused as not found everywhere.
 */

// Unreserved characters only (RFC 3986 §2.3): nothing a router could decode into something else.
const SEGMENT = /^[A-Za-z0-9._~-]+$/

/**
 * True when the raw request target (`req.url`) is in canonical origin form.
 *
 * @example
 * isCanonicalTarget('/api/v1/datasets/acme/claims?maxResults=5') // true
 * isCanonicalTarget('/%61pi/v1/datasets/acme/claims')            // false
 * isCanonicalTarget('/api/v1/datasets/acme/../claims')           // false
 */
export function isCanonicalTarget(target: string | undefined): boolean {
  if (target === undefined || !target.startsWith('/')) return false
  const query = target.indexOf('?')
  const path = query === -1 ? target : target.slice(0, query)
  if (path === '/') return true
  const segments = path.slice(1).split('/')
  return segments.every((segment) => SEGMENT.test(segment) && segment !== '.' && segment !== '..')
}

/** The query string of a raw request target, parsed as the browser's URLSearchParams would. */
export function queryOf(target: string | undefined): URLSearchParams {
  const start = target?.indexOf('?') ?? -1
  return new URLSearchParams(start === -1 || target === undefined ? '' : target.slice(start + 1))
}
