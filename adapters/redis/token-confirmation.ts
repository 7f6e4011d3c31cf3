/**
 * Background confirmation of changes that too few replicas confirmed (a Redis Cluster shard after
 * a failover): each is written again where a failover lost it, within bounds, and reported to the
 * store's `onError` if it never is.
 */

import { parseScopes } from '../../src/decisions/scopes.js'
import { TokenStoreError } from '../../src/errors.js'
import type { TokenRecord } from '../../src/tokens/token-record.js'

// A change too few replicas confirmed is confirmed again this many times, after a wait that doubles
// from the first to the longest (about 24 s in all): long enough for a killed node to rejoin as a
// replica after a restart, short enough that the operator hears of it while it still matters.
const CONFIRM_ATTEMPTS = 8
const CONFIRM_FIRST_DELAY_MS = 500
const CONFIRM_LONGEST_DELAY_MS = 4000

// A record without its use (`lastUsedAt`, `lastUsedFrom`): every request may write those, without
// waiting for replicas, so they tell nothing about which change a record holds.
function withoutUse(record: TokenRecord): string {
  const { lastUsedAt: _, lastUsedFrom: __, ...rest } = record
  return JSON.stringify(rest)
}

// The record as it should stand for `wanted` (an update that replaced `before`) to count as still
// written, undefined when there is nothing left to confirm, or LOST. A revocation is written again
// if a failover lost it (it is permanent, so nothing later can have undone it). Any other change is
// rewritten as it stands while it is in place, and written again, over the current use, when the
// record is back to `before` and the change took rights away (narrower scopes, an earlier expiry):
// a failover lost it, and leaving it would silently restore what the owner removed. A change that
// granted more is not written again (LOST): the record back at `before` may be another instance's
// later change, and rewriting it would give back rights someone just took away. Anything else is a
// later change, which is confirmed on its own.
function reassert(
  current: TokenRecord,
  before: TokenRecord,
  wanted: TokenRecord,
): string | undefined | typeof LOST {
  if (wanted.revokedAt !== undefined) {
    return JSON.stringify(
      current.revokedAt === undefined ? { ...current, revokedAt: wanted.revokedAt } : current,
    )
  }
  const now = withoutUse(current)
  if (now === withoutUse(wanted)) return JSON.stringify(current)
  if (now !== withoutUse(before)) return undefined
  if (grantsMore(wanted, before)) return LOST
  const { lastUsedAt: _, lastUsedFrom: __, ...changed } = wanted
  const { lastUsedAt, lastUsedFrom } = current
  return JSON.stringify({
    ...changed,
    ...(lastUsedAt !== undefined && { lastUsedAt }),
    ...(lastUsedFrom !== undefined && { lastUsedFrom }),
  })
}

// A lost change that is not written again: see reassert.
const LOST = Symbol('lost')

// Whether `wanted` lets the token do anything `before` did not: a scope `before` neither granted
// nor implied, or a later (or no) expiry.
function grantsMore(wanted: TokenRecord, before: TokenRecord): boolean {
  const had = parseScopes(before.scopes)
  return (
    wanted.scopes.some((scope) => !had.has(scope)) ||
    (wanted.expiresAt ?? Number.POSITIVE_INFINITY) > (before.expiresAt ?? Number.POSITIVE_INFINITY)
  )
}

/** What a {@link ChangeConfirmations} needs of its store. */
export interface ConfirmingStore {
  /** Replicas that must hold a change. */
  readonly minReplicas: number
  /** The store's compare-and-set on the record under `hash`: resolves whether it wrote. */
  compareAndSet(
    hash: string,
    action: string,
    change: (current: TokenRecord) => string | undefined,
  ): Promise<boolean>
  /** Whether enough replicas hold every write so far on the master of the record under `hash`. */
  replicated(hash: string): Promise<boolean>
  /** The host's error hook. */
  report(error: TokenStoreError): void
}

/**
 * The changes of one store being confirmed in the background.
 *
 * @example
 * const confirmations = new ChangeConfirmations(store)
 * if (!replicated) confirmations.confirmLater(hash, before, wanted)
 */
export class ChangeConfirmations {
  readonly #store: ConfirmingStore
  // The waits of background confirmations, ended early by close().
  readonly #pauses = new Set<{ timer: ReturnType<typeof setTimeout>; resolve: () => void }>()
  // The latest change made here to each token whose changes are being confirmed in the background.
  readonly #latestChanges = new Map<string, { wanted: TokenRecord; confirming: number }>()
  #closed = false
  #confirming = 0

  constructor(store: ConfirmingStore) {
    this.#store = store
  }

  /** How many changes are being confirmed. */
  get pending(): number {
    return this.#confirming
  }

  /** Notes a change made here, so that one being confirmed knows it was replaced. */
  changed(wanted: TokenRecord): void {
    const latest = this.#latestChanges.get(wanted.id)
    if (latest !== undefined) latest.wanted = wanted
  }

  /** Ends every wait: the confirmations report what they could not confirm, and stop. */
  close(): void {
    this.#closed = true
    for (const pause of this.#pauses) {
      clearTimeout(pause.timer)
      pause.resolve()
    }
    this.#pauses.clear()
  }

  // Confirms a change in the background until enough replicas hold it, writing it again where a
  // failover lost it; bounded, and reported to onError if it never is.
  confirmLater(hash: string, before: TokenRecord, wanted: TokenRecord): void {
    const latest = this.#latestChanges.get(wanted.id) ?? { wanted, confirming: 0 }
    latest.wanted = wanted
    latest.confirming++
    this.#latestChanges.set(wanted.id, latest)
    // A later change made here replaced this one, even one that put `before` back (which would
    // otherwise read as this change lost): it has its own confirmation.
    const replaced = () => wanted.revokedAt === undefined && latest.wanted !== wanted
    const confirm = async (): Promise<void> => {
      for (let attempt = 0; attempt < CONFIRM_ATTEMPTS && !this.#closed; attempt++) {
        await this.#pause(Math.min(CONFIRM_FIRST_DELAY_MS * 2 ** attempt, CONFIRM_LONGEST_DELAY_MS))
        if (this.#closed) break
        try {
          let lost = false
          const written = await this.#store.compareAndSet(hash, 'confirm a token change', (current) => {
            if (replaced()) return undefined
            const next = reassert(current, before, wanted)
            lost = next === LOST
            return next === LOST ? undefined : next
          })
          if (lost) {
            this.#store.report(
              new TokenStoreError(
                `a change of token ${wanted.id} that granted more was undone by a failover and is not written again (it may have been changed back since): make it again if it is still wanted`,
              ),
            )
            return
          }
          // A later change replaced this one: its own write asked the replicas, and a shortfall
          // there is confirmed on its own.
          if (!written) return
          if (await this.#store.replicated(hash)) return
        } catch {
          // Redis is away or failing over: the next attempt asks again.
        }
      }
      const change = `a change of token ${wanted.id}${wanted.revokedAt === undefined ? '' : ' (its revocation)'}`
      const when = this.#closed ? 'before the store closed' : `after ${CONFIRM_ATTEMPTS} attempts`
      this.#store.report(
        new TokenStoreError(
          `${change} took effect, but fewer than ${this.#store.minReplicas} replicas confirmed it ${when}: a failover could undo it`,
        ),
      )
    }
    this.#confirming++
    void confirm().finally(() => {
      this.#confirming--
      if (--latest.confirming === 0) this.#latestChanges.delete(wanted.id)
    })
  }

  #pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const pause = {
        timer: setTimeout(() => {
          this.#pauses.delete(pause)
          resolve()
        }, ms),
        resolve,
      }
      pause.timer.unref?.()
      this.#pauses.add(pause)
    })
  }
}
