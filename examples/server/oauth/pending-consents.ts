/**
 * Consent requests waiting for the user's answer. The consent form carries only a random id; the
 * validated request (or the verified device grant) stays here, on the server, so a re-posted or
 * edited form can never change what is approved: its client, redirect URI, scopes, state or code
 * challenge. An entry is answered once, by the session it was shown to, within ten minutes.
 *
 * Entries live in the server's store — this process's memory, or the Redis that several instances
 * share (oauth/redis-pending-consents.ts), so any instance answers a consent page another showed.
 * Each belongs to an owner — the signed-in user, or before sign-in the device grant whose user code
 * a browser entered. A user keeps at most {@link MAX_PENDING_CONSENTS_PER_OWNER} open: past it the
 * user's own oldest is forgotten, never anyone else's. A grant has at most
 * {@link MAX_PENDING_CONSENTS_PER_GRANT} open: past it a new one is refused ({@link ConsentsFull},
 * `reason: 'grant'`) until they end, so that strangers entering someone's code neither push out the
 * page its owner opened nor pile up entries. Creating one takes constant time.
 */
import type { AuthorizationRequest, DeviceGrantSummary } from 'data-access-policy/oauth'
import { randomToken } from '../web/sessions.js'
import type { ClientIdentity } from './client-registry.js'

/** How long a consent page may stay open before its answer is refused. */
export const CONSENT_TTL_MS = 10 * 60_000

/** Consent requests one signed-in user keeps open at most; past it, their oldest go. */
export const MAX_PENDING_CONSENTS_PER_OWNER = 20

/**
 * Consent requests one device grant keeps open before sign-in (its code entered in that many
 * browsers); past it, a new one is refused until one ends. A browser is as cheap as a new cookie
 * but a grant is not (the server caps the grants created), so this bound, not the browsers, keeps
 * what signed-out entries can hold: twice the grants that can be alive, below
 * {@link MAX_PENDING_CONSENTS}.
 */
export const MAX_PENDING_CONSENTS_PER_GRANT = 2

/**
 * Consent requests made before sign-in (owners `grant:…`) one process keeps in memory at most, for
 * every grant together: past it, a new one is refused ({@link ConsentsFull}) until the oldest
 * expires; nobody's open consent is forgotten to make room. A bound of last resort: the grants'
 * own bound keeps them below it; users (owners `user:…`) are the seed's, each bounded on its own,
 * and never refused for the signed-out entries' sake.
 */
export const MAX_PENDING_CONSENTS = 10_000

// The owners that are signed-in users; every other owner is a device grant entered signed out.
const USER_OWNER = 'user:'

/**
 * The owner of a consent request made before sign-in: the device grant whose code was entered.
 *
 * @example
 * await consents.create({ kind: 'device', grant, client }, grantOwner(grant.grantId), undefined)
 */
export function grantOwner(grantId: string): string {
  return `grant:${grantId}`
}

/**
 * Whether `owner` is a signed-in user (else a device grant entered before sign-in).
 *
 * @example
 * isUserOwner('user:alice')          // true
 * isUserOwner(grantOwner('grant-1')) // false
 */
export function isUserOwner(owner: string): boolean {
  return owner.startsWith(USER_OWNER)
}

/** How many consent requests `owner` keeps open: a user's bound, or a grant's. */
export function ownerBound(owner: string, maxPerOwner: number): number {
  return owner.startsWith(USER_OWNER) ? maxPerOwner : MAX_PENDING_CONSENTS_PER_GRANT
}

/** What is waiting for consent: an authorization request, or a device grant whose code was entered. */
export type ConsentSubject =
  | {
      readonly kind: 'code'
      readonly request: AuthorizationRequest
      /** Absent for a session client (no `client_id`). */
      readonly client: ClientIdentity | undefined
    }
  | {
      readonly kind: 'device'
      readonly grant: DeviceGrantSummary
      readonly client: ClientIdentity | undefined
    }

/** A consent request as stored. */
export type PendingConsent = ConsentSubject & {
  readonly id: string
  readonly expiresAt: number
  /**
   * The session the consent page was shown to; a device consent started before sign-in has none
   * until the user signs in and sees it ({@link PendingConsentStore.claim}).
   */
  readonly sessionId: string | undefined
}

/** The answer of {@link PendingConsentStore.create} when there is no room: try again after `retryAfter` s. */
export interface ConsentsFull {
  readonly full: true
  readonly retryAfter: number
  /**
   * `server`: the signed-out entries of every grant together are at their bound; `grant`: this
   * device grant already has {@link MAX_PENDING_CONSENTS_PER_GRANT} open.
   */
  readonly reason: 'server' | 'grant'
}

/** Where pending consents live. */
export interface PendingConsentStore {
  /**
   * Stores a consent request of `owner` (`user:HANDLE`, `grant:ID`), bound to `sessionId` when
   * given, and answers it with its id; or {@link ConsentsFull} when no room is left.
   */
  create(
    subject: ConsentSubject,
    owner: string,
    sessionId: string | undefined,
    expiresAt?: number,
  ): Promise<PendingConsent | ConsentsFull>
  /**
   * The unexpired entry `id` for the session `sessionId`, binding an unbound entry to it: the
   * first signed-in session to open a device consent owns it.
   */
  claim(id: string | undefined, sessionId: string): Promise<PendingConsent | undefined>
  /** Removes and answers the unexpired entry `id` of the session `sessionId`: an answer is taken once. */
  take(id: string | undefined, sessionId: string): Promise<PendingConsent | undefined>
}

/**
 * A new entry's id and expiry: ten minutes at most, less when `expiresAt` (a device grant's end)
 * comes sooner.
 */
export function newConsent(
  subject: ConsentSubject,
  sessionId: string | undefined,
  now: number,
  expiresAt?: number,
): PendingConsent {
  return {
    ...subject,
    id: randomToken(),
    expiresAt: Math.min(expiresAt ?? Number.POSITIVE_INFINITY, now + CONSENT_TTL_MS),
    sessionId,
  }
}

type Entry = { readonly consent: PendingConsent; readonly owner: string }

// No room until `oldest` ends.
function full(oldest: Entry, now: number, reason: ConsentsFull['reason']): ConsentsFull {
  return { full: true, retryAfter: Math.max(1, Math.ceil((oldest.consent.expiresAt - now) / 1000)), reason }
}

/**
 * The pending consents of one process.
 *
 * @example
 * const consents = new MemoryPendingConsents(Date.now)
 * const pending = await consents.create({ kind: 'code', request, client }, 'user:alice', session.id)
 * if (!('full' in pending)) await consents.take(pending.id, session.id) // the entry, once
 */
export class MemoryPendingConsents implements PendingConsentStore {
  readonly #now: () => number
  readonly #maxPerOwner: number
  readonly #max: number
  // Every entry, in creation order; each owner's ids, and the ids of the entries made before sign-in
  // (owners other than `user:…`: grants now), bounded together by MAX_PENDING_CONSENTS, in creation order.
  readonly #entries = new Map<string, Entry>()
  readonly #byOwner = new Map<string, Set<string>>()
  readonly #signedOut = new Set<string>()

  constructor(now: () => number, maxPerOwner = MAX_PENDING_CONSENTS_PER_OWNER, max = MAX_PENDING_CONSENTS) {
    this.#now = now
    this.#maxPerOwner = maxPerOwner
    this.#max = max
  }

  async create(
    subject: ConsentSubject,
    owner: string,
    sessionId: string | undefined,
    expiresAt?: number,
  ): Promise<PendingConsent | ConsentsFull> {
    const now = this.#now()
    this.#forgetExpiredOldest(now)
    const signedOut = !owner.startsWith(USER_OWNER)
    const own = this.#ownLive(owner, now)
    if (own !== undefined && own.size >= ownerBound(owner, this.#maxPerOwner)) {
      const oldest = this.#entries.get(own.values().next().value!)!
      // A grant's pages stay; a user's own oldest makes room for the newest.
      if (signedOut) return full(oldest, now, 'grant')
      this.#delete(oldest.consent.id)
    }
    if (signedOut && this.#signedOut.size >= this.#max) {
      return full(this.#entries.get(this.#signedOut.values().next().value!)!, now, 'server')
    }
    const consent = newConsent(subject, sessionId, now, expiresAt)
    this.#entries.set(consent.id, { consent, owner })
    if (signedOut) this.#signedOut.add(consent.id)
    const ids = this.#byOwner.get(owner)
    if (ids === undefined) this.#byOwner.set(owner, new Set([consent.id]))
    else ids.add(consent.id)
    return consent
  }

  async claim(id: string | undefined, sessionId: string): Promise<PendingConsent | undefined> {
    const entry = this.#live(id)
    if (entry === undefined) return undefined
    const { consent } = entry
    if (consent.sessionId === undefined) {
      const claimed = { ...consent, sessionId }
      this.#entries.set(consent.id, { consent: claimed, owner: entry.owner })
      return claimed
    }
    return consent.sessionId === sessionId ? consent : undefined
  }

  async take(id: string | undefined, sessionId: string): Promise<PendingConsent | undefined> {
    const entry = this.#live(id)
    if (entry === undefined || entry.consent.sessionId !== sessionId) return undefined
    this.#delete(entry.consent.id)
    return entry.consent
  }

  /** Entries held (for tests of the bounds). */
  get size(): number {
    return this.#entries.size
  }

  // The owner's ids after forgetting its expired oldest ones (a grant's entries expire in the order
  // they were made: each ends ten minutes after it, or with the grant).
  #ownLive(owner: string, now: number): Set<string> | undefined {
    const own = this.#byOwner.get(owner)
    for (const id of own ?? []) {
      if (now < this.#entries.get(id)!.consent.expiresAt) break
      this.#delete(id)
    }
    return this.#byOwner.get(owner)
  }

  #live(id: string | undefined): Entry | undefined {
    if (id === undefined) return undefined
    const entry = this.#entries.get(id)
    if (entry === undefined) return undefined
    // Written as "not before" so that a NaN clock expires the entry rather than keeping it.
    if (!(this.#now() < entry.consent.expiresAt)) {
      this.#delete(id)
      return undefined
    }
    return entry
  }

  // Forgets expired entries from the oldest on, stopping at the first live one, among all entries
  // and among the signed-out ones (whose bound must not be held by expired ones behind a user's): each
  // entry is looked at a bounded number of times more than it is created, so creating stays
  // constant time on average. An entry that expires sooner behind a live one waits its turn.
  #forgetExpiredOldest(now: number): void {
    for (const order of [this.#entries.keys(), this.#signedOut.values()]) {
      for (const id of order) {
        if (now < this.#entries.get(id)!.consent.expiresAt) break
        this.#delete(id)
      }
    }
  }

  #delete(id: string): void {
    const entry = this.#entries.get(id)
    if (entry === undefined) return
    this.#entries.delete(id)
    this.#signedOut.delete(id)
    const ids = this.#byOwner.get(entry.owner)
    ids?.delete(id)
    if (ids?.size === 0) this.#byOwner.delete(entry.owner)
  }
}
