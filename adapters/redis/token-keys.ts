/**
 * Where the token store keeps what, and for how long. With the prefix `dap:`:
 *
 * - `dap:token:HASH` — the record (JSON), or `alias:NEWHASH` for the value a rotation replaced;
 * - `dap:token-id:ID` — the hash of the token with this id;
 * - `dap:token-owner:USER` — a sorted set of the user's hashes, scored by their records' end.
 *
 * Every key ends with its record (`tokenRetainUntil`), plus {@link RETENTION_GRACE_MS}: the time to
 * live is set in the same script as each write, from the store's clock. A live token without
 * expiry has no end, and neither have its keys.
 */

import type { TokenRecord } from '../../src/tokens/token-record.js'
import { tokenRetainUntil } from '../../src/tokens/token-retention.js'

/** A SHA-256 in lower-case hex: what every record key and index entry names. */
export const HASH = /^[0-9a-f]{64}$/

/** What a record key holds once a rotation replaced its value: `alias:` and the current hash. */
export const ALIAS_PREFIX = 'alias:'

/**
 * How long past its end Redis keeps a key: a minute for the clocks of instances that disagree.
 * Lookups and listings stop answering a record at its end by the store's own clock either way.
 */
export const RETENTION_GRACE_MS = 60_000

/** The key names of one store (one prefix). */
export class TokenKeys {
  readonly #prefix: string

  constructor(prefix: string) {
    this.#prefix = prefix
  }

  /** The record stored under the hash of its value. */
  record(hash: string): string {
    return `${this.#prefix}token:${hash}`
  }

  /** The id index: the hash of the token with this id. */
  id(id: string): string {
    return `${this.#prefix}token-id:${id}`
  }

  /** Where an earlier version kept the user's hashes, as a plain set without ends. */
  legacyOwner(userId: string): string {
    return `${this.#prefix}tokens-of:${userId}`
  }

  /** The owner index: the user's hashes, scored by their records' end. */
  owner(userId: string): string {
    return `${this.#prefix}token-owner:${userId}`
  }
}

/**
 * The time to live (ms) that the keys of `record` get when written at `now` (the store's clock): to
 * its end and the grace, at least 1 ms; `0` for a record without end (no expiry).
 *
 * @example
 * timeToLive(revokeToken(record, now), now) // REVOKED_DISPLAY_MS + RETENTION_GRACE_MS
 */
export function timeToLive(record: TokenRecord, now: number): number {
  const end = tokenRetainUntil(record)
  return end === undefined ? 0 : Math.max(1, end - now + RETENTION_GRACE_MS)
}

/** The owner index's score of `record`: its end, `+inf` for none. */
export function endScore(record: TokenRecord): string {
  const end = tokenRetainUntil(record)
  return end === undefined ? '+inf' : String(end)
}
