/**
 * The rules every token store checks before it replaces a record, in one place for the memory and
 * Redis stores: what an update may change, and what makes a rotation.
 */
import { TokenStoreError } from '../errors.js'
import type { TokenRecord } from './token-record.js'

// Fields fixed at creation: the id and hash are the lookup keys, the rest is who and what the token
// is. Only a rotation changes the hashes.
const IMMUTABLE_FIELDS = [
  'hash',
  'kind',
  'userId',
  'createdAt',
  'clientId',
  'previousHash',
  'previousHashExpiresAt',
  'audience',
] as const

// What a rotation keeps: everything but the value's hash and hint, its dates and the overlap.
const KEPT_BY_ROTATION = ['kind', 'userId', 'createdAt', 'clientId', 'audience'] as const

// A field's values are the same: lists (an audience) element by element, anything else by identity.
function same(a: unknown, b: unknown): boolean {
  if (Array.isArray(a) && Array.isArray(b))
    return a.length === b.length && a.every((item, i) => item === b[i])
  return a === b
}

/** Refuses an update of `current` to `next` that changes an immutable field or undoes a revocation. */
export function checkUpdate(current: TokenRecord, next: TokenRecord): void {
  for (const field of IMMUTABLE_FIELDS) {
    if (!same(next[field], current[field])) {
      throw new TokenStoreError(`cannot update token ${next.id}: ${field} cannot change`)
    }
  }
  checkRevocation(current, next, 'update')
}

/**
 * Refuses a rotation of `current` to `next` that is not one: a revoked token, an unchanged hash, a
 * previous hash other than the current one (a stale record: rotated meanwhile), or another change
 * of who the token is.
 */
export function checkRotation(current: TokenRecord, next: TokenRecord): void {
  if (current.revokedAt !== undefined) {
    throw new TokenStoreError(`cannot rotate token ${next.id}: it is revoked`)
  }
  if (next.hash === current.hash)
    throw new TokenStoreError(`cannot rotate token ${next.id}: the hash is unchanged`)
  if (next.previousHash !== current.hash) {
    throw new TokenStoreError(`cannot rotate token ${next.id}: it was rotated or changed meanwhile`)
  }
  for (const field of KEPT_BY_ROTATION) {
    if (!same(next[field], current[field])) {
      throw new TokenStoreError(`cannot rotate token ${next.id}: ${field} cannot change`)
    }
  }
  checkRevocation(current, next, 'rotate')
}

function checkRevocation(current: TokenRecord, next: TokenRecord, action: string): void {
  if (current.revokedAt !== undefined && next.revokedAt !== current.revokedAt) {
    throw new TokenStoreError(`cannot ${action} token ${next.id}: a revocation is permanent`)
  }
}
