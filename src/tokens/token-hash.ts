import { sha256 } from '@noble/hashes/sha2.js'
import { bytesToHex } from '@noble/hashes/utils.js'
import { ConfigError, InvalidArgumentError } from '../errors.js'
import { encodeBase64Url } from './base64url.js'

// The slice of node:crypto this module uses, typed loosely because other runtimes that offer
// `process.getBuiltinModule` may lack `hash` (added in Node 20.12 and 21.7).
type NodeCryptoLike = {
  readonly hash?: (algorithm: string, data: string, outputEncoding: 'hex' | 'base64url') => string
  readonly createHash?: (algorithm: string) => {
    update(data: string, inputEncoding: 'utf8'): { digest(outputEncoding: 'hex'): string }
  }
}

type Sha256Hex = (value: string) => string

/**
 * Which SHA-256 implementation {@link hashTokenValue} runs on this runtime.
 *
 * @example
 * const backend: TokenHashBackend = tokenHashBackend()
 */
export type TokenHashBackend = 'node:crypto' | '@noble/hashes'

type ResolvedSha256 = {
  readonly backend: TokenHashBackend
  readonly sha256Hex: Sha256Hex
  /** Base64url without padding, or undefined where only the pure path serves it. */
  readonly sha256Base64Url?: Sha256Hex
}

// `undefined` until first use: resolving lazily keeps the module free of import-time side effects.
let resolved: ResolvedSha256 | undefined

const utf8 = new TextEncoder()

// Pure JS, so it runs where node:crypto is unreachable (Workers without `nodejs_compat`, browsers).
// TextEncoder writes a lone surrogate as U+FFFD, as Node's UTF-8 encoding does: digests agree.
const pureSha256Hex: Sha256Hex = (value) => bytesToHex(sha256(utf8.encode(value)))

function resolveSha256(): ResolvedSha256 {
  let nodeCrypto: NodeCryptoLike | undefined
  try {
    nodeCrypto = globalThis.process?.getBuiltinModule?.('node:crypto') as NodeCryptoLike | undefined
  } catch {
    // A runtime whose probe throws has no node:crypto to offer; the pure path serves.
  }
  const hash = nodeCrypto?.hash
  // One-shot `crypto.hash` beats `createHash` for inputs this small (docs/performance.md).
  // Stryker disable next-line ConditionalExpression,StringLiteral,BlockStatement: equivalent because createHash below gives the same digest under the same backend; this is the faster path
  if (typeof hash === 'function') {
    return {
      backend: 'node:crypto',
      sha256Hex: (value) => hash('sha256', value, 'hex'),
      sha256Base64Url: (value) => hash('sha256', value, 'base64url'),
    }
  }
  const createHash = nodeCrypto?.createHash
  if (typeof createHash === 'function') {
    return {
      backend: 'node:crypto',
      // Stryker disable next-line StringLiteral: equivalent because Node reads an empty encoding as UTF-8, the default
      sha256Hex: (value) => createHash('sha256').update(value, 'utf8').digest('hex'),
    }
  }
  return { backend: '@noble/hashes', sha256Hex: pureSha256Hex }
}

function sha256Implementation(): ResolvedSha256 {
  if (resolved === undefined) resolved = resolveSha256()
  return resolved
}

function requireString(value: unknown): asserts value is string {
  // The message never echoes the argument: it could be a token value.
  if (typeof value !== 'string') throw new InvalidArgumentError('a token value must be a string')
}

/**
 * Which SHA-256 implementation this runtime hashes tokens with: `'node:crypto'` where the runtime
 * offers it through `process.getBuiltinModule` (Node, Bun, Deno), `'@noble/hashes'` elsewhere
 * (Workers without `nodejs_compat`, browsers). Both give the same digest.
 *
 * @example
 * tokenHashBackend() // 'node:crypto' on Node
 */
export function tokenHashBackend(): TokenHashBackend {
  return sha256Implementation().backend
}

/**
 * The SHA-256 of a token value (its UTF-8 bytes) as 64 lower-case hex digits, computed synchronously
 * on every runtime: with node:crypto where it is reachable (faster), otherwise with the pure-JS
 * `@noble/hashes`. This is what token records store instead of the value.
 *
 * @throws {InvalidArgumentError} when `value` is not a string.
 * @example
 * hashTokenValue('abc') // 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'
 */
export function hashTokenValue(value: string): string {
  requireString(value)
  return sha256Implementation().sha256Hex(value)
}

/**
 * The same digest as {@link hashTokenValue}, through Web Crypto (`crypto.subtle`). Never needed
 * (the synchronous {@link hashTokenValue} runs everywhere); kept for hosts that prefer Web Crypto.
 *
 * @throws {ConfigError} when the runtime has no `globalThis.crypto.subtle`.
 * @example
 * await hashTokenValueAsync('abc') // 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'
 */
export async function hashTokenValueAsync(value: string): Promise<string> {
  requireString(value)
  const subtle = globalThis.crypto?.subtle
  if (subtle === undefined) {
    throw new ConfigError([], 'hashTokenValueAsync needs Web Crypto (globalThis.crypto.subtle)')
  }
  return bytesToHex(new Uint8Array(await subtle.digest('SHA-256', utf8.encode(value))))
}

/**
 * The SHA-256 of a string's UTF-8 bytes, base64url without padding: a DPoP proof's `ath` and a
 * JWK thumbprint. On the same backend as {@link hashTokenValue}. Internal to the package.
 *
 * @example
 * sha256Base64Url('abc') // 'ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0'
 */
export function sha256Base64Url(value: string): string {
  const fast = sha256Implementation().sha256Base64Url
  return fast === undefined ? encodeBase64Url(sha256(utf8.encode(value))) : fast(value)
}
