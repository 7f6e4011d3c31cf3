import type { Principal } from '../decisions/principal.js'
import { parseScopes, SCOPES, type Scope } from '../decisions/scopes.js'
import { type CreatedToken, createApiToken } from '../tokens/token-record.js'

/** A fixed instant for tests: 2026-01-01T00:00:00Z, in epoch milliseconds. */
export const FIXED_NOW = Date.UTC(2026, 0, 1)

/** A controllable clock: `now()` returns a fixed time that only `advance` and `set` move. */
export interface FixedClock {
  now(): number
  advance(ms: number): void
  set(epochMs: number): void
}

/**
 * Creates a clock frozen at `start` (default {@link FIXED_NOW}); pass its `now` to the policy and
 * to the token store, which decides by it when a record's end has come.
 *
 * @example
 * const clock = fixedClock()
 * const tokens = new MemoryTokenStore({ now: clock.now })
 * const policy = createAccessPolicy({ tokens, now: clock.now })
 * clock.advance(3_600_000)
 */
export function fixedClock(start: number = FIXED_NOW): FixedClock {
  let current = start
  return {
    now: () => current,
    advance(ms) {
      current += ms
    },
    set(epochMs) {
      current = epochMs
    },
  }
}

/**
 * A token principal for `userId` with the given scopes (`public` is always added).
 *
 * @example
 * decide({ principal: principalWith('data.metadata'), operation: 'dataset.metadata', resource })
 */
export function principalWith(scopes: string | readonly Scope[], userId = 'alice'): Principal {
  return Object.freeze({
    kind: 'token',
    userId,
    scopes: parseScopes(scopes),
    tokenId: `tok_fixture_${userId}`,
    tokenKind: 'api',
  })
}

/** One principal per single scope, keyed by scope name: the usual rows of a policy test table. */
export const PRINCIPALS: Readonly<Record<Scope, Principal>> = Object.freeze(
  Object.fromEntries(SCOPES.map((scope) => [scope, principalWith([scope])])) as Record<Scope, Principal>,
)

/**
 * Creates an API token record and its value at {@link FIXED_NOW} (or `now`), for seeding a store.
 *
 * @example
 * const { record, value } = tokenFixture({ scopes: 'data.data' })
 * await store.save(record)
 */
export function tokenFixture(
  options: {
    userId?: string
    name?: string
    scopes?: string | readonly string[]
    now?: number
    expiresAt?: number
  } = {},
): CreatedToken {
  return createApiToken({
    userId: options.userId ?? 'alice',
    name: options.name ?? 'fixture',
    scopes: options.scopes ?? [],
    now: options.now ?? FIXED_NOW,
    ...(options.expiresAt === undefined ? {} : { expiresAt: options.expiresAt }),
  })
}
