import { hmac } from '@noble/hashes/hmac.js'
import { sha256 } from '@noble/hashes/sha2.js'
import { ConfigError } from '../errors.js'
import { encodeBase64Url } from '../tokens/base64url.js'

/** Options of {@link createDpopNonces}. */
export interface DpopNonceOptions {
  /**
   * The secret every instance of the API shares (at least 32 bytes; a string counts its UTF-8
   * bytes): the nonce of a time window is its HMAC, so instances agree without talking.
   */
  readonly secret: string | Uint8Array
  /** How long one nonce is current, in seconds (10–3600, default 300); the previous one stays accepted. */
  readonly windowSeconds?: number
}

/** Server-provided DPoP nonces (RFC 9449 §8), stateless. */
export interface DpopNonces {
  /** The nonce current at `now` (epoch ms): what `DPoP-Nonce` announces. */
  current(now: number): string
  /** Whether a proof's `nonce` is the current or the previous window's. */
  accepts(nonce: string | undefined, now: number): boolean
}

const encoder = new TextEncoder()
const MIN_SECRET_BYTES = 32

/**
 * Stateless server nonces: the nonce of each time window is the HMAC-SHA-256 of the window's
 * number under a secret the instances share, so any instance checks what another announced, and
 * nothing is stored. A nonce is accepted during its window and the next one, so that a client told
 * one just before the window turns is not refused at once.
 *
 * @throws {ConfigError} naming `secret` or `windowSeconds`.
 * @see https://www.rfc-editor.org/rfc/rfc9449#section-8
 * @example
 * const nonces = createDpopNonces({ secret: process.env.DPOP_NONCE_SECRET! })
 * nonces.accepts(nonces.current(Date.now()), Date.now()) // true
 */
export function createDpopNonces(options: DpopNonceOptions): DpopNonces {
  const secret = typeof options.secret === 'string' ? encoder.encode(options.secret) : options.secret
  if (!(secret instanceof Uint8Array) || secret.length < MIN_SECRET_BYTES) {
    throw new ConfigError(['secret'], `must be a string or bytes of at least ${MIN_SECRET_BYTES} bytes`)
  }
  const windowSeconds = options.windowSeconds ?? 300
  if (!Number.isSafeInteger(windowSeconds) || windowSeconds < 10 || windowSeconds > 3600) {
    throw new ConfigError(
      ['windowSeconds'],
      `must be an integer from 10 to 3600, got ${String(windowSeconds)}`,
    )
  }
  const key = Uint8Array.from(secret)
  // The last two windows' nonces: every request of a window asks for the same one or two.
  const memo = new Map<number, string>()
  const nonceOf = (window: number): string => {
    let nonce = memo.get(window)
    if (nonce === undefined) {
      nonce = encodeBase64Url(hmac(sha256, key, encoder.encode(`DPoP-Nonce ${window}`)))
      if (memo.size >= 4) memo.clear()
      memo.set(window, nonce)
    }
    return nonce
  }
  const windowAt = (now: number): number => Math.floor(now / 1000 / windowSeconds)
  return Object.freeze({
    current: (now: number) => nonceOf(windowAt(now)),
    accepts(nonce: string | undefined, now: number) {
      if (nonce === undefined) return false
      const window = windowAt(now)
      return nonce === nonceOf(window) || nonce === nonceOf(window - 1)
    },
  })
}
