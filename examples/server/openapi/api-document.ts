/**
 * The server's OpenAPI 3.1 description, built from the route sets it mounts: every API route with
 * the security, denial responses and `x-data-access` that `data-access-policy/openapi` derives from
 * the operation the route is guarded with, and the OAuth endpoints as public routes. Nothing is
 * written by hand twice: a route added to a set is described, with the scope its guard needs.
 */
import {
  describeRoutes,
  type PathsObject,
  type RouteDescription,
  type RouteRequirement,
  type SecuritySchemeObject,
  securitySchemes,
} from '../../../src/openapi/index.js'
import type { Route, RouteSet } from '../routes/route-set.js'

/** The route sets the description covers, by name, with the tag their operations get. */
const DESCRIBED_SETS: Readonly<Record<string, string>> = { api: 'API', oauth: 'OAuth' }

// What the OAuth routes are, in a line each; the policy does not guard them (they take no token).
const OAUTH_SUMMARIES: Readonly<Record<string, string>> = {
  'GET /oauth/authorize': 'Authorization endpoint: the standard flow (PKCE with S256 required)',
  'POST /oauth/device_authorization':
    'Device authorization endpoint: the device flow (PKCE with S256 required)',
  'POST /oauth/token': 'Token endpoint: authorization codes, device codes and refresh tokens',
  'GET /.well-known/oauth-authorization-server': 'Authorization server metadata (RFC 8414)',
}

/** An OpenAPI 3.1 document, as the server serves it. */
export interface ApiDocument {
  readonly openapi: '3.1.0'
  readonly info: { readonly title: string; readonly version: string; readonly description: string }
  readonly servers: readonly { readonly url: string }[]
  readonly tags: readonly { readonly name: string; readonly description: string }[]
  readonly components: { readonly securitySchemes: Record<string, SecuritySchemeObject> }
  readonly paths: PathsObject
}

function requirementOf(set: string, route: Route): RouteRequirement {
  if (set !== 'api') return 'public'
  return route.access?.operation ?? ('authenticated' satisfies RouteRequirement)
}

function describe(set: string, route: Route): RouteDescription {
  const operation = requirementOf(set, route)
  const summary =
    set === 'oauth' ? (OAUTH_SUMMARIES[`${route.method} ${route.path}`] ?? 'OAuth page') : undefined
  return {
    method: route.method,
    path: route.path,
    operation,
    tags: [DESCRIBED_SETS[set]!],
    ...(summary === undefined ? {} : { summary }),
  }
}

/**
 * Describes the API and OAuth routes of `sets` for a server whose public origin is `origin` (the
 * OAuth server's issuer, too).
 *
 * @example
 * const document = apiDocument(app.routeSets, 'http://127.0.0.1:3000')
 */
export function apiDocument(sets: readonly RouteSet[], origin: string): ApiDocument {
  const options = { issuer: origin } as const
  const routes = sets
    .filter((set) => Object.hasOwn(DESCRIBED_SETS, set.name))
    .flatMap((set) => set.routes.map((route) => describe(set.name, route)))
  return {
    openapi: '3.1.0',
    info: {
      title: 'Data access API (reference server)',
      version: '1',
      description:
        'The reference server of data-access-policy. Every request to the API carries a bearer token; ' +
        'each operation lists the scope it needs (its minimal scope) and the denials it can answer, ' +
        'generated from the policy itself.',
    },
    servers: [{ url: origin }],
    tags: [
      { name: 'API', description: 'Datasets, workflows and organizations, behind the access policy' },
      { name: 'OAuth', description: 'The OAuth server: both flows require PKCE with S256' },
    ],
    components: { securitySchemes: securitySchemes(options) },
    paths: describeRoutes(routes, options),
  }
}
