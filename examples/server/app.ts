/**
 * The framework-neutral application: the data model, the token store and the access policy built
 * from a seed, and the route sets every binding mounts.
 */
import { type AccessPolicy, createAccessPolicy, MemoryTokenStore, type TokenStore } from '../../src/index.js'
import { apiRoutes } from './api-routes.js'
import { DataModel } from './data.js'
import type { RouteSet } from './route-set.js'
import type { Seed } from './seed.js'

/** The realm named in `WWW-Authenticate` challenges. */
export const REALM = 'data-api'

/** Everything a binding needs to serve the API. */
export interface App {
  readonly policy: AccessPolicy
  readonly model: DataModel
  readonly tokens: TokenStore
  /** Mounted in order; later issues append the sign-in, settings and OAuth pages. */
  readonly routeSets: readonly RouteSet[]
}

/**
 * Builds an application from a loaded seed: a fresh token store filled with the seed's records, a
 * policy with the library's defaults (HTTPS required except from loopback), and a private copy of
 * the data, so that several apps built from one seed never share state.
 *
 * @example
 * const app = await createApp(await loadSeed(DEMO_SEED))
 */
export async function createApp(seed: Seed): Promise<App> {
  const tokens = new MemoryTokenStore()
  for (const record of seed.tokens) await tokens.save(record)
  const policy = createAccessPolicy({ tokens, realm: REALM })
  const model = new DataModel(seed)
  return { policy, model, tokens, routeSets: [apiRoutes({ model, policy })] }
}
