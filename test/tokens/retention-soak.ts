import { expect } from 'vitest'
import { createApiToken, createOAuthToken, revokeToken } from '../../src/tokens/token-record.js'
import { EXPIRED_DISPLAY_MS, REVOKED_DISPLAY_MS } from '../../src/tokens/token-retention.js'
import type { TokenStore } from '../../src/tokens/token-store.js'

/** A settable clock, as a store's `now` option takes it. */
export interface SoakClock {
  now: number
}

/** How a soak runs. */
export interface SoakOptions {
  /** Create/revoke (and OAuth minting) cycles. */
  readonly cycles: number
  /** Simulated time between cycles, ms. */
  readonly stepMs: number
  /** What the store holds now: records in memory, keys in Redis. */
  readonly count: () => Promise<number>
  /** The owner's name: fresh per run, so that runs on one backing store stay apart. */
  readonly user: string
}

/**
 * A signed-in user creating a token, listing them (as the settings page does after each change)
 * and revoking it, and an OAuth client minting a one-hour token for another user, every `stepMs` of
 * a simulated clock. Answers what the store holds at each tenth of the run.
 */
export async function soak(store: TokenStore, clock: SoakClock, options: SoakOptions): Promise<number[]> {
  const { cycles, stepMs, count, user } = options
  const samples: number[] = []
  for (let cycle = 0; cycle < cycles; cycle++) {
    const now = clock.now
    const { record } = createApiToken({ userId: user, name: `churn ${cycle}`, scopes: 'data.data', now })
    await store.save(record)
    await store.listByOwner(user)
    await store.update(revokeToken(record, now))
    await store.save(createOAuthToken({ userId: `${user}-oauth`, scopes: '', clientId: 'cli', now }).record)
    clock.now += stepMs
    if ((cycle + 1) % (cycles / 10) === 0) samples.push(await count())
  }
  return samples
}

/**
 * Checks that a soak's samples stay flat once records pass their display window: every sample
 * after it is within `perRecord` of the largest number of records still on display (revoked API
 * tokens and expired OAuth tokens within their windows), and the last half never grows.
 */
export function expectFlat(samples: readonly number[], options: SoakOptions, perRecord: number): void {
  const { cycles, stepMs } = options
  const onDisplay =
    Math.ceil(REVOKED_DISPLAY_MS / stepMs) + Math.ceil((EXPIRED_DISPLAY_MS + 3_600_000) / stepMs) + 2
  const bound = onDisplay * perRecord + 1
  const windowCycles = Math.ceil((EXPIRED_DISPLAY_MS + 3_600_000) / stepMs)
  expect(cycles).toBeGreaterThan(2 * windowCycles)
  for (const sample of samples) expect(sample).toBeLessThanOrEqual(bound)
  const settled = samples.slice(Math.ceil(samples.length / 2))
  expect(Math.max(...settled) - Math.min(...settled)).toBeLessThanOrEqual(2 * perRecord + 8)
}
