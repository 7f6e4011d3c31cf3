import type { Deny } from '../decisions/decision.js'
import { DPOP_ALGORITHMS } from '../dpop/dpop-proof.js'

const DEFAULT_DPOP_ALGORITHMS = DPOP_ALGORITHMS

/** A denial rendered as HTTP: what every adapter sends, byte for byte. */
export interface HttpDenial {
  readonly status: number
  /**
   * Lower-case header names: `content-type`, `www-authenticate` where RFC 6750 asks for it, and
   * `retry-after` (whole seconds, RFC 9110 §10.2.3) on a `rate_limited` 429, and `dpop-nonce` on a
   * `use_dpop_nonce` 401 (RFC 9449 §8).
   */
  readonly headers: Readonly<Record<string, string>>
  /** `{"error":{"status":403,"message":"Not authorized","code":"…"}}` */
  readonly body: string
}

// RFC 6749 §5.2 and RFC 6750 §3: error_description = *( %x20-21 / %x23-5B / %x5D-7E ).
const FORBIDDEN_DESCRIPTION_CHARACTER = /[^\x20-\x21\x23-\x5b\x5d-\x7e]/g

/**
 * `text` within the `error_description` grammar of RFC 6749 §5.2 and RFC 6750 §3, which strict
 * clients parse: quotes and backslashes swapped (descriptions may quote the client's input),
 * anything else outside printable ASCII masked. Internal to the package.
 *
 * @example
 * errorDescription('the proof\'s htm is "G\u00c9T"') // "the proof's htm is 'G?T'"
 */
export function errorDescription(text: string): string {
  return text.replaceAll('"', "'").replaceAll('\\', '/').replace(FORBIDDEN_DESCRIPTION_CHARACTER, '?')
}

/** Quotes a value as an RFC 9110 quoted-string, escaping `"` and `\` (RFC 6750 §3). */
export function quoteHeaderValue(value: string): string {
  return `"${value.replace(/[\\"]/g, '\\$&')}"`
}

/**
 * The `WWW-Authenticate` value for a denial, or undefined where none belongs.
 * No credentials: `Bearer realm="…"` with no error code (RFC 6750 §3.1); a bad request or token
 * adds `error` (and `error_description` where the denial has one); insufficient scope names the
 * scope that would have sufficed, and a 401 on a route names the route's minimal scope. With
 * `resourceMetadata`, every 401 challenge also names the resource's metadata (RFC 9728 §5.1), where
 * a client that starts from a 401 finds the authorization server. A refusal about a DPoP-bound token
 * or its proof is a `DPoP` challenge naming the accepted proof algorithms (RFC 9449 §7.1).
 *
 * @see https://www.rfc-editor.org/rfc/rfc9449#section-7.1
 * @see https://www.rfc-editor.org/rfc/rfc6750#section-3
 * @see https://www.rfc-editor.org/rfc/rfc9728#section-5.1
 *
 * @example
 * wwwAuthenticate(deny('invalid_token'), 'data-api') // 'Bearer realm="data-api", error="invalid_token"'
 * wwwAuthenticate(deny('missing_token'), 'data-api', 'https://data.example.org/.well-known/oauth-protected-resource/api/v1')
 * // 'Bearer realm="data-api", resource_metadata="https://data.example.org/.well-known/oauth-protected-resource/api/v1"'
 */
export function wwwAuthenticate(
  decision: Deny,
  realm: string,
  resourceMetadata?: string,
  dpopAlgorithms: readonly string[] = DEFAULT_DPOP_ALGORITHMS,
): string | undefined {
  const metadata =
    resourceMetadata === undefined || decision.status !== 401
      ? ''
      : `, resource_metadata=${quoteHeaderValue(resourceMetadata)}`
  const scope = decision.scope === undefined ? '' : `, scope=${quoteHeaderValue(decision.scope)}`
  const description =
    decision.description === undefined ? '' : `, error_description=${quoteHeaderValue(decision.description)}`
  if (
    decision.scheme === 'DPoP' ||
    decision.code === 'invalid_dpop_proof' ||
    decision.code === 'use_dpop_nonce'
  ) {
    const algs = `, algs=${quoteHeaderValue(dpopAlgorithms.join(' '))}`
    return `DPoP realm=${quoteHeaderValue(realm)}, error="${decision.code}"${description}${algs}${scope}${metadata}`
  }
  switch (decision.code) {
    case 'missing_token':
      return `Bearer realm=${quoteHeaderValue(realm)}${scope}${metadata}`
    case 'invalid_request':
    case 'invalid_token':
      return `Bearer realm=${quoteHeaderValue(realm)}, error="${decision.code}"${description}${scope}${metadata}`
    case 'insufficient_scope':
      return decision.scope === undefined
        ? 'Bearer error="insufficient_scope"'
        : `Bearer error="insufficient_scope", scope=${quoteHeaderValue(decision.scope)}`
  }
  // Every other denial (403s other than scope, 404, 429, 503) carries no challenge.
  return undefined
}

/**
 * Renders a denial as status, headers and JSON body. The body carries only the status, the public
 * message and the stable code: never a token, an allow-list or a limit.
 *
 * @example
 * renderDenial(deny('missing_token'), 'data-api')
 * // { status: 401, headers: { 'www-authenticate': 'Bearer realm="data-api"', … }, body: '{"error":…}' }
 */
export function renderDenial(
  decision: Deny,
  realm: string,
  resourceMetadata?: string,
  dpopAlgorithms?: readonly string[],
): HttpDenial {
  const headers: Record<string, string> = { 'content-type': 'application/json; charset=utf-8' }
  const challenge = wwwAuthenticate(decision, realm, resourceMetadata, dpopAlgorithms)
  if (challenge !== undefined) headers['www-authenticate'] = challenge
  if (decision.retryAfter !== undefined) headers['retry-after'] = String(decision.retryAfter)
  if (decision.dpopNonce !== undefined) headers['dpop-nonce'] = decision.dpopNonce
  const body = JSON.stringify({
    error: { status: decision.status, message: decision.message, code: decision.code },
  })
  return Object.freeze({ status: decision.status, headers: Object.freeze(headers), body })
}
