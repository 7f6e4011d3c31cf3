/**
 * The server's OpenAPI 3.1 description, built from the route sets it mounts: every API route with
 * the security, denial responses and `x-data-access` that `data-access-policy/openapi` derives from
 * the operation the route is guarded with, and what the route's handler adds (route-docs.ts): its
 * success, parameters, body and the server's own errors; the OAuth endpoints with their client
 * authentication; the leak report endpoint when it is served. A route added to a set is described,
 * with the scope its guard needs.
 */
import {
  type DescribedOperation,
  describeRoutes,
  operationSecurity,
  type PathParameterObject,
  type ResponseObject,
  type RouteDescription,
  type RouteRequirement,
  type SecuritySchemeObject,
  securitySchemes,
} from 'data-access-policy/openapi'
import type { Route, RouteSet } from '../routes/route-set.js'
import {
  API_ROUTE_DOCS,
  BODY_TOO_LARGE,
  CLIENT_SCHEME,
  CLIENT_SECURITY_SCHEME,
  LEAK_REPORT_DOC,
  oauthRouteDoc,
  type ParameterDoc,
  type RequestBodyDoc,
  type ResponseDoc,
  type RouteDoc,
  serverErrorBody,
} from './route-docs.js'

/** The route sets the description covers, by name, with the tag their operations get. */
const DESCRIBED_SETS: Readonly<Record<string, string>> = {
  api: 'API',
  oauth: 'OAuth',
  'leak-reports': 'Secret scanning',
}

/** An operation of the document: the policy's part, and the parameters and body of the route's own. */
export type DocumentOperation = Omit<DescribedOperation, 'parameters' | 'security'> & {
  parameters?: readonly (PathParameterObject | ParameterDoc)[]
  requestBody?: RequestBodyDoc
  security: readonly Record<string, readonly string[]>[]
}

/** An OpenAPI 3.1 document, as the server serves it. */
export interface ApiDocument {
  readonly openapi: '3.1.0'
  readonly info: { readonly title: string; readonly version: string; readonly description: string }
  readonly servers: readonly { readonly url: string }[]
  readonly tags: readonly { readonly name: string; readonly description: string }[]
  readonly components: {
    readonly securitySchemes: Record<string, SecuritySchemeObject | typeof CLIENT_SECURITY_SCHEME>
  }
  readonly paths: Record<string, Record<string, DocumentOperation>>
}

interface Described {
  readonly route: RouteDescription
  readonly doc: RouteDoc | undefined
  readonly security?: readonly Record<string, readonly string[]>[]
}

function requirementOf(set: string, route: Route): RouteRequirement {
  if (set !== 'api') return 'public'
  return route.access?.operation ?? ('authenticated' satisfies RouteRequirement)
}

// The 400 of a route that reads input: the policy's (`invalid_request`, with the bearer challenge)
// or the handler's (`invalid_parameter`, with a `detail` and no challenge). Each body as sent.
function badRequest(policy: ResponseObject): ResponseDoc {
  const challenge = policy.headers?.['WWW-Authenticate']
  return {
    description:
      'Bad request: a malformed `Authorization` header, two of them, or a token also sent as ' +
      '`access_token` (`invalid_request`, with the bearer challenge); or a parameter or body this ' +
      'route refuses (`invalid_parameter`, with a `detail`).',
    ...(challenge === undefined
      ? {}
      : {
          headers: {
            'WWW-Authenticate': {
              description: `On \`invalid_request\` only. ${challenge.description}`,
              schema: challenge.schema,
            },
          },
        }),
    content: {
      'application/json': {
        schema: {
          oneOf: [
            policy.content?.['application/json']?.schema,
            serverErrorBody(400, 'Bad request', ['invalid_parameter']),
          ],
        },
      },
    },
  }
}

// The handler's answers over the policy's: its success, its 400 and 404 where it adds them, and the
// 413 every API route answers to a body past the cap.
function apiResponses(operation: RouteRequirement, doc: RouteDoc | undefined): Record<string, ResponseDoc> {
  const policy = operationSecurity(operation).responses
  const responses: Record<string, ResponseDoc> = { ...(doc?.responses ?? {}), 413: BODY_TOO_LARGE }
  if (doc?.readsInput && policy['400'] !== undefined) responses['400'] = badRequest(policy['400'])
  // An unknown owner of a listing is the policy's own 404 body, which `authenticated` lacks.
  if (policy['404'] === undefined) responses['404'] = operationSecurity('dataset.overview').responses['404']!
  return responses
}

function describe(set: string, route: Route): Described {
  const operation = requirementOf(set, route)
  const tags = [DESCRIBED_SETS[set]!]
  const base = { method: route.method, path: route.path, operation, tags }
  if (set === 'api') {
    const doc = API_ROUTE_DOCS[`${route.method} ${route.path}`]
    return {
      doc,
      route: {
        ...base,
        ...(doc?.description === undefined ? {} : { description: doc.description }),
        // The server's bodies use arrays and nulls, beyond the policy's own schema types: passed
        // through as written.
        responses: apiResponses(operation, doc) as Record<string, ResponseObject>,
      },
    }
  }
  if (set === 'oauth') {
    const doc = oauthRouteDoc(route.method, route.path)
    return {
      doc: undefined,
      route: {
        ...base,
        ...(doc === undefined ? {} : { summary: doc.summary }),
        ...(doc?.description === undefined ? {} : { description: doc.description }),
      },
      ...(doc?.security === undefined ? {} : { security: doc.security }),
    }
  }
  const doc = LEAK_REPORT_DOC
  return {
    doc,
    route: {
      ...base,
      summary: doc.summary,
      ...(doc.description === undefined ? {} : { description: doc.description }),
      responses: doc.responses as Record<string, ResponseObject>,
    },
  }
}

const openApiPath = (path: string) => path.replace(/:([A-Za-z_]\w*)/g, '{$1}')

/**
 * Describes the API, OAuth and leak report routes of `sets` for a server whose public origin is
 * `origin` (the OAuth server's issuer, too).
 *
 * @example
 * const document = apiDocument(app.routeSets, 'http://127.0.0.1:3000')
 */
export function apiDocument(sets: readonly RouteSet[], origin: string): ApiDocument {
  const options = { issuer: origin } as const
  const described = sets
    .filter((set) => Object.hasOwn(DESCRIBED_SETS, set.name))
    .flatMap((set) => set.routes.map((route) => describe(set.name, route)))
  const paths = describeRoutes(
    described.map((each) => each.route),
    options,
  ) as ApiDocument['paths']
  // What `describeRoutes` does not take: query and header parameters, bodies, client authentication.
  for (const { route, doc, security } of described) {
    const operation = paths[openApiPath(route.path)]![route.method.toLowerCase()]!
    if (doc?.parameters !== undefined) {
      operation.parameters = [...(operation.parameters ?? []), ...doc.parameters]
    }
    if (doc?.requestBody !== undefined) operation.requestBody = doc.requestBody
    // The policy guards none of them (`x-data-access` says `public`): the client authenticates.
    if (security !== undefined) operation.security = security
  }
  const leaks = sets.some((set) => set.name === 'leak-reports')
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
      ...(leaks
        ? [{ name: 'Secret scanning', description: 'Leak reports that revoke the tokens found public' }]
        : []),
    ],
    components: {
      securitySchemes: { ...securitySchemes(options), [CLIENT_SCHEME]: CLIENT_SECURITY_SCHEME },
    },
    paths,
  }
}
