/**
 * Consent requests waiting for the user's answer. The consent form carries only a random id; the
 * validated request (or the verified device grant) stays here, on the server, so a re-posted or
 * edited form can never change what is approved: its client, redirect URI, scopes, state or code
 * challenge. An entry is answered once, by the session it was shown to, within ten minutes.
 */
import type { AuthorizationRequest, DeviceGrantSummary } from '../../../src/oauth/index.js'
import { randomToken } from '../web/sessions.js'
import type { ClientIdentity } from './client-registry.js'

/** How long a consent page may stay open before its answer is refused. */
export const CONSENT_TTL_MS = 10 * 60_000

/** Consent requests kept at most; past it, the oldest are forgotten. */
export const MAX_PENDING_CONSENTS = 10_000

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
   * until the user signs in and sees it ({@link PendingConsents.claim}).
   */
  readonly sessionId: string | undefined
}

/**
 * The in-memory store of pending consents.
 *
 * @example
 * const consents = new PendingConsents(Date.now)
 * const pending = consents.create({ kind: 'code', request, client }, session.id)
 * consents.take(pending.id, session.id) // the entry, once
 */
export class PendingConsents {
  readonly #now: () => number
  readonly #entries = new Map<string, PendingConsent>()

  constructor(now: () => number) {
    this.#now = now
  }

  /** Stores a consent request, bound to `sessionId` when given, and answers it with its id. */
  create(subject: ConsentSubject, sessionId: string | undefined, expiresAt?: number): PendingConsent {
    const now = this.#now()
    this.#sweep(now)
    const pending: PendingConsent = {
      ...subject,
      id: randomToken(),
      expiresAt: Math.min(expiresAt ?? Number.POSITIVE_INFINITY, now + CONSENT_TTL_MS),
      sessionId,
    }
    this.#entries.set(pending.id, pending)
    return pending
  }

  /**
   * The unexpired entry `id` for the session `sessionId`, binding an unbound entry to it: the
   * first signed-in session to open a device consent owns it.
   */
  claim(id: string | undefined, sessionId: string): PendingConsent | undefined {
    const pending = this.#live(id)
    if (pending === undefined) return undefined
    if (pending.sessionId === undefined) {
      const claimed = { ...pending, sessionId }
      this.#entries.set(pending.id, claimed)
      return claimed
    }
    return pending.sessionId === sessionId ? pending : undefined
  }

  /** Removes and answers the unexpired entry `id` of the session `sessionId`: an answer is taken once. */
  take(id: string | undefined, sessionId: string): PendingConsent | undefined {
    const pending = this.#live(id)
    if (pending === undefined || pending.sessionId !== sessionId) return undefined
    this.#entries.delete(pending.id)
    return pending
  }

  #live(id: string | undefined): PendingConsent | undefined {
    if (id === undefined) return undefined
    const pending = this.#entries.get(id)
    if (pending === undefined) return undefined
    // Written as "not before" so that a NaN clock expires the entry rather than keeping it.
    if (!(this.#now() < pending.expiresAt)) {
      this.#entries.delete(id)
      return undefined
    }
    return pending
  }

  #sweep(now: number): void {
    for (const [id, pending] of this.#entries) if (!(now < pending.expiresAt)) this.#entries.delete(id)
    // Insertion order is creation order: the oldest go first.
    for (const id of this.#entries.keys()) {
      if (this.#entries.size < MAX_PENDING_CONSENTS) break
      this.#entries.delete(id)
    }
  }
}
