import { ConfigError, InvalidArgumentError } from '../errors.js'

// The slice of node:crypto this module uses, typed loosely because other runtimes that offer
// `process.getBuiltinModule` may lack `hash` (added in Node 20.12 and 21.7).
type NodeCryptoLike = {
  readonly hash?: (algorithm: string, data: string, outputEncoding: 'hex') => string
  readonly createHash?: (algorithm: string) => {
    update(data: string, inputEncoding: 'utf8'): { digest(outputEncoding: 'hex'): string }
  }
}

type Sha256Hex = (value: string) => string

// `undefined` until first use: resolving lazily keeps the module free of import-time side effects.
let syncSha256: Sha256Hex | null | undefined

function resolveSyncSha256(): Sha256Hex | null {
  const nodeCrypto = globalThis.process?.getBuiltinModule?.('node:crypto') as NodeCryptoLike | undefined
  const hash = nodeCrypto?.hash
  // One-shot `crypto.hash` is about twice as fast as `createHash` for inputs this small (design §11).
  if (typeof hash === 'function') return (value) => hash('sha256', value, 'hex')
  const createHash = nodeCrypto?.createHash
  if (typeof createHash === 'function') {
    return (value) => createHash('sha256').update(value, 'utf8').digest('hex')
  }
  return null
}

function syncSha256OrNull(): Sha256Hex | null {
  if (syncSha256 === undefined) syncSha256 = resolveSyncSha256()
  return syncSha256
}

function requireString(value: unknown): asserts value is string {
  // The message never echoes the argument: it could be a token value.
  if (typeof value !== 'string') throw new InvalidArgumentError('a token value must be a string')
}

/**
 * True when this runtime can hash synchronously ({@link hashTokenValue}); otherwise use
 * {@link hashTokenValueAsync}.
 *
 * @example
 * const hash = supportsSyncTokenHash() ? hashTokenValue(value) : await hashTokenValueAsync(value)
 */
export function supportsSyncTokenHash(): boolean {
  return syncSha256OrNull() !== null
}

/**
 * The SHA-256 of a token value (its UTF-8 bytes) as 64 lower-case hex digits, computed synchronously
 * with node:crypto. This is what token records store instead of the value.
 *
 * @throws {ConfigError} when the runtime has no synchronous SHA-256 (no `process.getBuiltinModule`).
 * @example
 * hashTokenValue('abc') // 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'
 */
export function hashTokenValue(value: string): string {
  requireString(value)
  const sha256 = syncSha256OrNull()
  if (sha256 === null) {
    throw new ConfigError(
      [],
      'hashTokenValue needs node:crypto through process.getBuiltinModule, which this runtime lacks; ' +
        'use hashTokenValueAsync',
    )
  }
  return sha256(value)
}

const HEX_BYTES = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0'))

/**
 * The same digest as {@link hashTokenValue}, through Web Crypto (`crypto.subtle`), for runtimes
 * without node:crypto (Deno, Workers, browsers).
 *
 * @example
 * await hashTokenValueAsync('abc') // 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'
 */
export async function hashTokenValueAsync(value: string): Promise<string> {
  requireString(value)
  const subtle = globalThis.crypto?.subtle
  if (subtle === undefined) {
    throw new ConfigError([], 'hashTokenValueAsync needs Web Crypto (globalThis.crypto.subtle)')
  }
  const digest = new Uint8Array(await subtle.digest('SHA-256', new TextEncoder().encode(value)))
  let hex = ''
  for (const byte of digest) hex += HEX_BYTES[byte]
  return hex
}
