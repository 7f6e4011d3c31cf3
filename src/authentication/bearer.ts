/** What an `Authorization` header says about bearer credentials (RFC 6750 §2.1). */
export type BearerCredentials =
  /** No bearer credentials: no header, or another scheme (`Basic …`). */
  | { readonly kind: 'none' }
  /** The header is present but not a well-formed `Bearer <b64token>`. */
  | { readonly kind: 'malformed' }
  /** A syntactically valid bearer token. */
  | { readonly kind: 'token'; readonly token: string }

/** @internal No credentials of the scheme asked for. */
export const NONE: BearerCredentials = Object.freeze({ kind: 'none' })
const MALFORMED: BearerCredentials = Object.freeze({ kind: 'malformed' })

// RFC 9110 §5.6.2 tchar, indexed by char code.
const TCHAR = new Uint8Array(128)
for (const c of "!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz") {
  TCHAR[c.charCodeAt(0)] = 1
}
// RFC 6750 §2.1 b64token = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"=", indexed
// by char code.
const B64CHAR = new Uint8Array(128)
for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~+/') {
  B64CHAR[c.charCodeAt(0)] = 1
}
const EQUALS = 0x3d

/**
 * True when `value` from `start` on is exactly one b64token (RFC 6750 §2.1): the `Bearer` and `DPoP`
 * schemes' token. A table scan rather than a regular expression: faster on every request, as
 * `npm run bench` measures in process.
 */
function isB64TokenAt(value: string, start: number): boolean {
  const length = value.length
  let i = start
  // Stryker disable next-line ConditionalExpression,EqualityOperator: equivalent because charCodeAt past the end is NaN, which matches nothing
  while (i < length && B64CHAR[value.charCodeAt(i)] === 1) i++
  if (i === start) return false
  // Stryker disable next-line ConditionalExpression,EqualityOperator: equivalent because charCodeAt past the end is NaN, which matches nothing
  while (i < length && value.charCodeAt(i) === EQUALS) i++
  return i === length
}
const SP = 0x20

const BEARER = 'bearer'

// Case-insensitive match of the scheme's characters (lower case, letters only) at the start of
// `value`, without allocating: OR-ing 0x20 lower-cases ASCII letters, and every other tchar that
// could collide is not a letter.
function isScheme(value: string, scheme: string): boolean {
  for (let k = 0; k < scheme.length; k++) {
    if ((value.charCodeAt(k) | 0x20) !== scheme.charCodeAt(k)) return false
  }
  return true
}

// A typed array reads undefined past its end, so no code above ASCII is a tchar.
function isTchar(code: number): boolean {
  return TCHAR[code] === 1
}

/**
 * Parses one `Authorization` header value. The scheme is the leading run of `tchar`s; only
 * `Bearer` (any case) followed by one or more SP (never tab or NBSP), a b64token and nothing else
 * is a token. No `trim()`: it would silently accept tabs and NBSPs.
 *
 * @see https://www.rfc-editor.org/rfc/rfc6750#section-2.1
 *
 * @example
 * parseBearerHeader('Bearer abc') // { kind: 'token', token: 'abc' }
 * parseBearerHeader('Basic dXNlcg==') // { kind: 'none' }
 * parseBearerHeader('Bearer\tabc') // { kind: 'malformed' }
 */
export function parseBearerHeader(value: string): BearerCredentials {
  return parseSchemeToken(value, BEARER)
}

/**
 * @internal Parses one `Authorization` value for one token scheme (`scheme` in lower case: `bearer`,
 * `dpop`): the scheme in any case, one or more SP (never tab or NBSP), a b64token (RFC 6750 §2.1,
 * RFC 9449 §7.1's token68 for these tokens) and nothing else. Another scheme is `none`.
 */
export function parseSchemeToken(value: string, scheme: string): BearerCredentials {
  const length = value.length
  let i = 0
  // Stryker disable next-line ConditionalExpression,EqualityOperator: equivalent because charCodeAt past the end is NaN, which matches nothing
  while (i < length && isTchar(value.charCodeAt(i))) i++
  if (i === 0) return MALFORMED
  if (i !== scheme.length || !isScheme(value, scheme)) return NONE
  let start = i
  // Stryker disable next-line ConditionalExpression,EqualityOperator: equivalent because charCodeAt past the end is NaN, which matches nothing
  while (start < length && value.charCodeAt(start) === SP) start++
  // No SP after the scheme: `Bearer/abc` is not a token even though `/abc` is a b64token. Nothing
  // after the spaces is rejected below, since a b64token has at least one character.
  if (start === i) return MALFORMED
  if (!isB64TokenAt(value, start)) return MALFORMED
  return { kind: 'token', token: value.slice(start) }
}
