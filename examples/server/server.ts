/**
 * Starting the reference server in-process: pick the framework binding, build the app from a
 * loaded seed, listen. main.ts wraps this for the command line; tests call it directly.
 */

import { type App, createApp } from './app.js'
import type { Framework, StoreOption } from './flags.js'
import { startExpress } from './http/express.js'
import { startFastify } from './http/fastify.js'
import type { RunningServer } from './http/front-door.js'
import { startHono } from './http/hono.js'
import type { TrustProxy } from './http/trust-proxy.js'
import type { SecretScanningKeys } from './leaks/secret-scanning-keys.js'
import type { AbuseLimits } from './limits/abuse-limits.js'
import type { RateLimitStore } from './limits/rate-limits.js'
import type { ClientMetadataOptions } from './oauth/oauth-context.js'
import type { PendingConsentStore } from './oauth/pending-consents.js'
import type { RegistrationStore } from './oauth/registrations.js'
import type { Seed } from './seed/load.js'
import { openSharedStores } from './shared-stores.js'

/** Options of {@link startServer}; the defaults are the command line's. */
export interface StartServerOptions {
  /** A loaded seed (`loadSeed`). */
  readonly seed: Seed
  readonly framework?: Framework
  readonly host?: string
  readonly port?: number
  readonly trustProxy?: TrustProxy
  readonly store?: StoreOption
  /** The clock, epoch ms; `Date.now` by default (tests move it to expire tokens and sessions). */
  readonly now?: () => number
  /** `--public-url`, parsed (`parsePublicUrl`); absent: the listening address. */
  readonly publicUrl?: string | undefined
  /** Abuse limits other than the defaults (limits/abuse-limits.ts). */
  readonly limits?: Partial<AbuseLimits>
  /** `--ipv6-prefix`: the length of the IPv6 networks the limits count together; 64 by default. */
  readonly ipv6Prefix?: number
  /**
   * Where the limits count with `--store memory`; a fresh `MemoryRateLimitStore` by default (tests
   * pass a small one to fill it).
   */
  readonly rateLimits?: RateLimitStore
  /** Where consent pages wait with `--store memory`; a fresh `MemoryPendingConsents` by default. */
  readonly consents?: PendingConsentStore
  /** `--max-token-lifetime`, in days; absent: no cap. */
  readonly maxTokenLifetimeDays?: number | undefined
  /** `--max-live-tokens`: live API tokens one user may hold; absent: the default, 100. */
  readonly maxLiveTokens?: number | undefined
  /** `--secret-scanning-keys`, read (`readSecretScanningKeys`); absent: no leak endpoint. */
  readonly secretScanningKeys?: SecretScanningKeys | undefined
  /** How client ID metadata documents are fetched (`--client-metadata-allow-http-loopback`; tests' resolver). */
  readonly clientMetadata?: ClientMetadataOptions
  /** `--max-registered-clients`; 10,000 by default. */
  readonly maxRegisteredClients?: number
  /** Where registered clients live with `--store memory` (tests pass one with a short life). */
  readonly registrations?: RegistrationStore
}

/** A running reference server. */
export interface StartedServer extends RunningServer {
  readonly framework: Framework
  readonly app: App
}

const BINDINGS = { express: startExpress, fastify: startFastify, hono: startHono } as const

/**
 * Builds the app and serves it on the chosen framework.
 *
 * With `--store redis://…` the tokens and OAuth state live on that Redis server, shared with every
 * other instance started on it; the seed's tokens are added unless already there.
 *
 * @throws {Error} when Redis does not answer within five seconds.
 * @example
 * const server = await startServer({ seed: await loadSeed(DEMO_SEED), framework: 'hono', port: 0 })
 * await fetch(`${server.url}/api/v1/datasets/acme/weather`)
 * await server.close()
 */
export async function startServer(options: StartServerOptions): Promise<StartedServer> {
  const shared = await openSharedStores(options.store ?? { kind: 'memory' }, options.now, {
    ...(options.maxRegisteredClients === undefined
      ? {}
      : { maxRegisteredClients: options.maxRegisteredClients }),
  })
  const framework = options.framework ?? 'fastify'
  try {
    const app = await createApp(options.seed, {
      ...(options.now === undefined ? {} : { now: options.now }),
      ...(shared === undefined
        ? {}
        : {
            tokens: shared.tokens,
            oauthState: shared.oauthState,
            sessions: shared.sessions,
            signInKey: shared.signInKey,
            rateLimits: shared.rateLimits,
            consents: shared.consents,
            reportReplays: shared.reportReplays,
            registrations: shared.registrations,
            dpopReplayCache: shared.dpopReplayCache,
          }),
      ...(options.registrations === undefined || shared !== undefined
        ? {}
        : { registrations: options.registrations }),
      ...(options.clientMetadata === undefined ? {} : { clientMetadata: options.clientMetadata }),
      ...(options.maxRegisteredClients === undefined
        ? {}
        : { maxRegisteredClients: options.maxRegisteredClients }),
      ...(options.limits === undefined ? {} : { limits: options.limits }),
      ...(options.ipv6Prefix === undefined ? {} : { ipv6Prefix: options.ipv6Prefix }),
      ...(options.rateLimits === undefined || shared !== undefined ? {} : { rateLimits: options.rateLimits }),
      ...(options.consents === undefined || shared !== undefined ? {} : { consents: options.consents }),
      publicUrl: options.publicUrl,
      maxTokenLifetimeDays: options.maxTokenLifetimeDays,
      maxLiveTokens: options.maxLiveTokens,
      secretScanningKeys: options.secretScanningKeys,
    })
    const running = await BINDINGS[framework](app, {
      host: options.host ?? '127.0.0.1',
      port: options.port ?? 3000,
      trustProxy: options.trustProxy ?? false,
    })
    app.origin.listening(running.url)
    // The Redis connections go with the server, or they would keep the process alive.
    const close = async () => {
      await running.close()
      await shared?.close()
    }
    return { ...running, close, framework, app }
  } catch (error) {
    await shared?.close()
    throw error
  }
}
