/**
 * Where dynamically registered clients (RFC 7591, oauth/registration-endpoint.ts) are kept, bounded
 * in number and in time: a registration no token was issued to expires after
 * {@link UNUSED_REGISTRATION_TTL_MS}; once a token is issued it lives {@link USED_REGISTRATION_TTL_MS}
 * from its latest one. At the bound, a new registration pushes out the oldest unused one first (a
 * flood of registrations only ever pushes out its own kind), then the oldest used one. In process
 * memory by default, on Redis with `--store redis…` (oauth/redis-registrations.ts).
 */
import type { ClientRegistration } from 'data-access-policy/oauth'

/** How long a registration lives without a token issued to its client. */
export const UNUSED_REGISTRATION_TTL_MS = 24 * 60 * 60_000

/** How long a registration lives after the latest token issued to its client. */
export const USED_REGISTRATION_TTL_MS = 30 * 24 * 60 * 60_000

/** The most registrations kept by default (`--max-registered-clients`). */
export const DEFAULT_MAX_REGISTERED_CLIENTS = 10_000

/** Where registrations live. A failing store throws (a 503, never an unknown client taken as known). */
export interface RegistrationStore {
  /** Keeps a new registration, pushing out the oldest (unused first) when at the bound. */
  add(id: string, registration: ClientRegistration): Promise<void>
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
}

interface Entry {
  readonly registration: ClientRegistration
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

  constructor(options: RegistrationStoreOptions = {}) {
    this.#max = options.maxClients ?? DEFAULT_MAX_REGISTERED_CLIENTS
    this.#now = options.now ?? Date.now
    this.#unusedTtlMs = options.unusedTtlMs ?? UNUSED_REGISTRATION_TTL_MS
    this.#usedTtlMs = options.usedTtlMs ?? USED_REGISTRATION_TTL_MS
  }

  async add(id: string, registration: ClientRegistration): Promise<void> {
    const now = this.#now()
    if (this.#entries.size >= this.#max) this.#sweep(now)
    while (this.#entries.size >= this.#max) this.#entries.delete(this.#oldest())
    this.#entries.set(id, { registration, expiresAt: now + this.#unusedTtlMs, used: false })
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

  // The oldest unused registration, else the oldest of all (the map keeps registration order).
  #oldest(): string {
    for (const [id, entry] of this.#entries) if (!entry.used) return id
    return this.#entries.keys().next().value as string
  }
}
