/**
 * Starting the reference server in-process: pick the framework binding, build the app from a
 * loaded seed, listen. main.ts wraps this for the command line; tests call it directly.
 */
import { ConfigError } from '../../src/index.js'
import { type App, createApp } from './app.js'
import { startExpress } from './express.js'
import { startFastify } from './fastify.js'
import type { Framework, StoreOption } from './flags.js'
import type { RunningServer } from './front-door.js'
import { startHono } from './hono.js'
import type { Seed } from './seed.js'
import type { TrustProxy } from './trust-proxy.js'

/** Options of {@link startServer}; the defaults are the command line's. */
export interface StartServerOptions {
  /** A loaded seed (`loadSeed`). */
  readonly seed: Seed
  readonly framework?: Framework
  readonly host?: string
  readonly port?: number
  readonly trustProxy?: TrustProxy
  readonly store?: StoreOption
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
 * @throws {ConfigError} for `--store redis://…`, which a later issue brings.
 * @example
 * const server = await startServer({ seed: await loadSeed(DEMO_SEED), framework: 'hono', port: 0 })
 * await fetch(`${server.url}/api/v1/datasets/acme/weather`)
 * await server.close()
 */
export async function startServer(options: StartServerOptions): Promise<StartedServer> {
  const store = options.store ?? { kind: 'memory' }
  if (store.kind === 'redis') {
    throw new ConfigError(
      ['--store'],
      `the Redis store is not available yet (${store.url}); use --store memory`,
    )
  }
  const framework = options.framework ?? 'fastify'
  const app = await createApp(options.seed)
  const running = await BINDINGS[framework](app, {
    host: options.host ?? '127.0.0.1',
    port: options.port ?? 3000,
    trustProxy: options.trustProxy ?? false,
  })
  return { ...running, framework, app }
}
