/**
 * The resources this server issues tokens for (RFC 8707): its own API, `{public-url}/api/v1`, the
 * default audience of every grant, then the seed's `resources`. Each has the name the consent pages
 * show. The MCP endpoint, `{public-url}/mcp`, is a resource of its own: a token for the API is
 * refused there, and one for `/mcp` at the API.
 */
import type { KnownResources } from 'data-access-policy/oauth'
import { API_PREFIX } from '../api/api-routes.js'
import { MCP_PATH } from '../mcp/mcp-tools.js'
import type { PublicOrigin } from '../public-origin.js'
import type { SeedResource } from '../seed/schema.js'
import { perOrigin } from './discovery.js'

/** A resource as the consent page names it. */
export interface NamedResource {
  readonly uri: string
  readonly name: string
}

/** The server's own resources, as paths under its public URL; the first is the default audience. */
export const OWN_RESOURCES: readonly { readonly path: string; readonly name: string }[] = [
  { path: API_PREFIX, name: 'this data API' },
  { path: MCP_PATH, name: "this server's MCP endpoint (AI agents)" },
]

/** What the OAuth routes know of resources, for the current public URL. */
export interface ServerResources {
  /** The option the core's endpoints take. */
  readonly known: KnownResources
  /** Every resource, the server's own first, with its consent-page name. */
  readonly list: readonly NamedResource[]
  /** The consent-page name of `uri` (the URI itself for one that is not known). */
  nameOf(uri: string): string
}

/**
 * The API's resource identifier, `{public-url}/api/v1`: the policy's `resource` and the default
 * audience of the tokens this server issues.
 *
 * @example
 * apiResource(new PublicOrigin('https://data.example.org')) // 'https://data.example.org/api/v1'
 */
export function apiResource(origin: PublicOrigin): string {
  return `${origin.url}${API_PREFIX}`
}

/**
 * The MCP endpoint's resource identifier, `{public-url}/mcp`: the `resource` of its policy.
 *
 * @example
 * mcpResource(new PublicOrigin('https://data.example.org')) // 'https://data.example.org/mcp'
 */
export function mcpResource(origin: PublicOrigin): string {
  return `${origin.url}${MCP_PATH}`
}

/**
 * The server's resources, built once per public URL (which may be known only once it listens). A
 * seed resource with the URI of one of the server's own keeps the server's name.
 *
 * @example
 * const resources = serverResources(origin, seed.resources)
 * validateAuthorizationRequest(params, lookup, { resources: resources().known, issuer: origin.url })
 */
export function serverResources(
  origin: PublicOrigin,
  seeded: readonly SeedResource[],
): () => ServerResources {
  return perOrigin(origin, () => {
    const own = OWN_RESOURCES.map(({ path, name }) => ({ uri: `${origin.url}${path}`, name }))
    const ownUris = new Set(own.map((resource) => resource.uri))
    const list = [...own, ...seeded.filter((resource) => !ownUris.has(resource.uri))]
    const names = new Map(list.map((resource) => [resource.uri, resource.name]))
    return {
      known: { known: list.map((resource) => resource.uri), defaultResource: own[0]!.uri },
      list,
      nameOf: (uri) => names.get(uri) ?? uri,
    }
  })
}
