/**
 * Where dynamically registered clients (RFC 7591, oauth/registration-endpoint.ts) are kept, bounded
 * in number and in time: a registration no token was issued to expires after
 * {@link UNUSED_REGISTRATION_TTL_MS}; once a token is issued it lives {@link USED_REGISTRATION_TTL_MS}
 * from its latest one. At the bound, a new registration pushes out the oldest unused one registered
 * more than {@link UNUSED_REGISTRATION_GRACE_MS} ago (a flood of registrations only ever pushes out
 * its own kind, and a user signing in with a fresh one keeps it); a used registration is never
 * pushed out. When none can go, the registration is refused (429 with `Retry-After`). In process
 * memory by default, on Redis with `--store redis…` (oauth/redis-registrations.ts).
 */
import type { ClientRegistration } from 'data-access-policy/oauth'

/** How long a registration lives without a token issued to its client. */
export const UNUSED_REGISTRATION_TTL_MS = 24 * 60 * 60_000

/** How long a registration lives after the latest token issued to its client. */
export const USED_REGISTRATION_TTL_MS = 30 * 24 * 60 * 60_000

/**
 * How long an unused registration is safe from being pushed out by newer ones: a client that just
 * registered is in the middle of its user's sign-in.
 */
export const UNUSED_REGISTRATION_GRACE_MS = 10 * 60_000

/**
 * What became of a registration: kept, or refused because the store is full of registrations none
 * of which may be pushed out yet, with how long until one may.
 */
export type AddRegistration =
  | { readonly added: true }
  | { readonly added: false; readonly retryAfterMs: number }

/** The most registrations kept by default (`--max-registered-clients`). */
export const DEFAULT_MAX_REGISTERED_CLIENTS = 10_000

/** Where registrations live. A failing store throws (a 503, never an unknown client taken as known). */
export interface RegistrationStore {
  /**
   * Keeps a new registration, pushing out the oldest unused one past its grace when at the bound;
   * refuses it when none may go.
   */
  add(id: string, registration: ClientRegistration): Promise<AddRegistration>
  /** The live registration of `id`, or `undefined`. */
  get(id: string): Promise<ClientRegistration | undefined>
  /** Records that a token was issued to `id`: it lives {@link USED_REGISTRATION_TTL_MS} from now. */
  markUsed(id: string): Promise<void>
  /** How many registrations are kept (expired ones may still count until swept). */
  size(): Promise<number>
}

/** Options of the registration stores. */
export interface RegistrationStoreOptions {
  readonly maxClients?: number
  readonly now?: () => number
  readonly unusedTtlMs?: number
  readonly usedTtlMs?: number
  /** How long a new unused registration is safe from being pushed out ({@link UNUSED_REGISTRATION_GRACE_MS}). */
  readonly graceMs?: number
}

interface Entry {
  readonly registration: ClientRegistration
  readonly registeredAt: number
  expiresAt: number
  used: boolean
}

/**
 * Registrations in process memory: a map in order of registration, swept of expired entries when
 * full.
 *
 * @example
 * const registrations = new MemoryRegistrationStore({ maxClients: 10_000 })
 */
export class MemoryRegistrationStore implements RegistrationStore {
  readonly #entries = new Map<string, Entry>()
  readonly #max: number
  readonly #now: () => number
  readonly #unusedTtlMs: number
  readonly #usedTtlMs: number
  readonly #graceMs: number

  constructor(options: RegistrationStoreOptions = {}) {
    this.#max = options.maxClients ?? DEFAULT_MAX_REGISTERED_CLIENTS
    this.#now = options.now ?? Date.now
    this.#unusedTtlMs = options.unusedTtlMs ?? UNUSED_REGISTRATION_TTL_MS
    this.#usedTtlMs = options.usedTtlMs ?? USED_REGISTRATION_TTL_MS
    this.#graceMs = options.graceMs ?? UNUSED_REGISTRATION_GRACE_MS
  }

  async add(id: string, registration: ClientRegistration): Promise<AddRegistration> {
    const now = this.#now()
    if (this.#entries.size >= this.#max) this.#sweep(now)
    while (this.#entries.size >= this.#max) {
      const oldest = this.#oldestUnused()
      if (oldest === undefined) return { added: false, retryAfterMs: this.#graceMs }
      const [oldestId, entry] = oldest
      const safeUntil = entry.registeredAt + this.#graceMs
      if (now < safeUntil) return { added: false, retryAfterMs: safeUntil - now }
      this.#entries.delete(oldestId)
    }
    this.#entries.set(id, {
      registration,
      registeredAt: now,
      expiresAt: now + this.#unusedTtlMs,
      used: false,
    })
    return { added: true }
  }

  async get(id: string): Promise<ClientRegistration | undefined> {
    const entry = this.#entries.get(id)
    if (entry === undefined) return undefined
    if (!(this.#now() < entry.expiresAt)) {
      this.#entries.delete(id)
      return undefined
    }
    return entry.registration
  }

  async markUsed(id: string): Promise<void> {
    const entry = this.#entries.get(id)
    if (entry === undefined) return
    entry.used = true
    entry.expiresAt = this.#now() + this.#usedTtlMs
  }

  async size(): Promise<number> {
    return this.#entries.size
  }

  #sweep(now: number): void {
    for (const [id, entry] of this.#entries) if (!(now < entry.expiresAt)) this.#entries.delete(id)
  }

  // The oldest unused registration (the map keeps registration order); never a used one.
  #oldestUnused(): [string, Entry] | undefined {
    for (const each of this.#entries) if (!each[1].used) return each
    return undefined
  }
}
