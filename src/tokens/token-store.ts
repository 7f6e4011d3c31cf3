import type { TokenRecord } from './token-record.js'

/**
 * Where token records live. Every method is async so that a shared store (Redis) fits the same
 * shape as the embedded {@link MemoryTokenStore}; every failure is a `TokenStoreError`.
 *
 * Rules every implementation keeps (checked by the shared contract test suite):
 * - records are validated with `tokenRecordSchema` on the way in and returned frozen;
 * - `id` and `hash` are each unique; `id`, `hash`, `kind`, `userId` and `createdAt` never change;
 * - revocation is permanent: an update may not clear or move `revokedAt` once it is set;
 * - `touch` writes only `lastUsedAt` (and `lastUsedFrom`), so a late touch can never undo a
 *   concurrent revocation or scope change, as a read-modify-write `update` could;
 * - `update` never changes `hash`, `previousHash` or `previousHashExpiresAt`: only `rotate` does.
 *
 * Rotation (`rotateToken`) is optional for a host's own store, so that stores written before it
 * keep compiling and working; the reference pages offer "Regenerate" only where `rotate` exists. A
 * store that implements it must, for the overlap: answer `findByHash` for the record's
 * `previousHash` as well as its `hash` (with the same record: the caller checks the overlap with
 * `tokenStatusOfHash`), keep both hashes unique across tokens, and drop the replaced hash's index
 * entry at the latest on the next rotation. A store without `rotate` may ignore `touch`'s network.
 *
 * @example
 * const store: TokenStore = new MemoryTokenStore()
 * const { record, value } = createApiToken({ userId: 'alice', name: 'ci', scopes: 'data.data', now })
 * await store.save(record)
 * await store.findByHash(hashTokenValue(value)) // record
 */
export interface TokenStore {
  /**
   * The record whose value hashes to `hash` (64 lower-case hex digits), whatever its status. It is
   * on every request's path, so a store that holds records in memory may answer synchronously.
   */
  findByHash(hash: string): TokenRecord | undefined | Promise<TokenRecord | undefined>
  /**
   * Optional, for a store that must see the token value itself: one that asks the issuer about it
   * (RFC 7662 introspection, `IntrospectionTokenStore`). When present, authentication calls it
   * instead of {@link TokenStore.findByHash}; it answers the record of that value (whose `hash` is
   * the value's SHA-256), and must never log, store or forward the value anywhere but to the issuer.
   * `context` says who asks, for a store that budgets what it passes on per client network; a
   * store may throw (or reject with) a `TokenLookupLimitError` to have the request answered 429
   * `rate_limited` with `Retry-After`.
   */
  findByValue?(
    value: string,
    context?: TokenLookupContext,
  ): TokenRecord | undefined | Promise<TokenRecord | undefined>
  /**
   * Optional, for a store whose tokens are not of this library's `dap_`/`dao_` format (a JWT
   * issuer's): true when `value` has that store's own format, so that authentication passes it to
   * the store instead of refusing it unseen. A bearer token is already a b64token (RFC 6750 §2.1)
   * when asked; the store bounds its length. It must answer synchronously, without I/O, and never
   * keep or log the value.
   */
  acceptsTokenValue?(value: string): boolean
  /** The record with this id, whatever its status. */
  findById(id: string): Promise<TokenRecord | undefined>
  /**
   * Adds a new record; a duplicate id or hash is a `TokenStoreError`. A replicated store may answer
   * a {@link TokenWriteReceipt}; nothing (`undefined`) means the write is as durable as the store gets.
   */
  // biome-ignore lint/suspicious/noConfusingVoidType: a host's store that answers Promise<void> (written before receipts existed) must still fit.
  save(record: TokenRecord): Promise<void | TokenWriteReceipt>
  /**
   * Replaces the record with the same id; an unknown id or a forbidden change is a `TokenStoreError`.
   * A replicated store may answer a {@link TokenWriteReceipt}, as for `save`.
   */
  // biome-ignore lint/suspicious/noConfusingVoidType: as for save.
  update(record: TokenRecord): Promise<void | TokenWriteReceipt>
  /** The user's tokens, oldest first (by `createdAt`, then `id`). */
  listByOwner(userId: string): Promise<readonly TokenRecord[]>
  /**
   * Sets `lastUsedAt` to `now` unless it is already later, and `lastUsedFrom` to `network` (the
   * client's network, `networkOfAddress`) with it when given; an unknown id is a `TokenStoreError`.
   */
  touch(id: string, now: number, network?: string): Promise<void>
  /**
   * Replaces the record with the same id by `rotateToken`'s result: its new `hash` must be unused
   * and its `previousHash` must be the current record's `hash`; everything else
   * follows `update`'s rules. A revoked token, an unknown id or a stale record (the token was
   * rotated or changed meanwhile) is a `TokenStoreError`. Optional: see the interface's notes. A
   * replicated store may answer a {@link TokenWriteReceipt}, as for `save`.
   */
  // biome-ignore lint/suspicious/noConfusingVoidType: as for save.
  rotate?(record: TokenRecord): Promise<void | TokenWriteReceipt>
}

/**
 * Who asks a {@link TokenStore.findByValue} lookup: what the adapter knows of the request.
 *
 * @example
 * const record = await store.findByValue?.(value, { clientAddress: '203.0.113.9' })
 */
export interface TokenLookupContext {
  /**
   * The client address as the adapter's trusted-proxy handling resolved it (absent when unknown);
   * `networkOfAddress` gives the network it counts in (an IPv6 client's prefix, /64 unless configured).
   */
  readonly clientAddress?: string
}

/**
 * What a replicated store may answer for a write that took effect (`save`, `update`, `rotate`). The write is
 * done either way: every later lookup sees it. `replicated: false` says that the replicas a failover
 * would promote have not confirmed it yet, so a failover could still undo it; the store keeps
 * confirming it in the background and reports through its own error hook if it never can. A store
 * that answers nothing (every store before this type existed, and `MemoryTokenStore`) never has
 * anything pending.
 *
 * @example
 * const receipt = await store.update(revokeToken(record, Date.now()))
 * const pending = receipt?.replicated === false // "revoked (replication pending)"
 */
export interface TokenWriteReceipt {
  /** True once the write is on as many replicas as the store requires. */
  readonly replicated: boolean
}
