import { OPERATION_NAMES, type Operation, operationSpec } from '../decisions/operations.js'
import { InvalidArgumentError } from '../errors.js'
import type {
  JsonSchema,
  OpenApiOptions,
  OperationSecurity,
  ResponseObject,
  RouteRequirement,
} from './openapi-objects.js'
import { minimalScopeOf, operationSecurity } from './operation-security.js'

/** One route of a host, as {@link describeRoutes} takes it. */
export interface RouteDescription {
  /** The HTTP method, any case: `GET`, `post`… */
  readonly method: string
  /** The path, Express/Fastify/Hono style (`/datasets/:owner/:name`) or OpenAPI style (`{owner}`). */
  readonly path: string
  /** The operation the route is guarded with, `authenticated` or `public`. */
  readonly operation: RouteRequirement
  /** A one-line summary; default: the operation and its minimal scope. */
  readonly summary?: string
  /** A longer description. */
  readonly description?: string
  /** Tags to group the operation under. */
  readonly tags?: readonly string[]
  /** The route's own responses (its success, say); they win over the policy's for a status. */
  readonly responses?: Readonly<Record<string, ResponseObject>>
}

/** An OpenAPI Parameter Object for a path parameter. */
export type PathParameterObject = {
  name: string
  in: 'path'
  required: true
  schema: JsonSchema
}

/** An OpenAPI Operation Object as {@link describeRoutes} builds it. */
export type DescribedOperation = OperationSecurity & {
  summary: string
  description?: string
  tags?: string[]
  parameters?: PathParameterObject[]
}

/** An OpenAPI Paths Object: path → method → operation. */
export type PathsObject = Record<string, Record<string, DescribedOperation>>

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const

const PARAMETER = /:([A-Za-z_][A-Za-z0-9_]*)|\{([A-Za-z_][A-Za-z0-9_]*)\}/g

function openApiPath(path: string): { path: string; parameters: string[] } {
  const parameters: string[] = []
  const converted = path.replace(
    PARAMETER,
    (_match, colon: string | undefined, brace: string | undefined) => {
      const name = (colon ?? brace)!
      parameters.push(name)
      return `{${name}}`
    },
  )
  return { path: converted, parameters }
}

function defaultSummary(requirement: RouteRequirement): string {
  if (requirement === 'public') return 'Public: no token needed'
  if (requirement === 'authenticated') return 'Any valid token (scope public)'
  return `${requirement} (scope ${minimalScopeOf(requirement as Operation)})`
}

function checkRoute(route: RouteDescription, index: number): void {
  const where = `routes[${index}]`
  if (typeof route?.method !== 'string' || !METHODS.includes(route.method.toLowerCase() as never)) {
    throw new InvalidArgumentError(
      `${where}.method: expected one of ${METHODS.join(', ')}, got ${JSON.stringify(route?.method)}`,
    )
  }
  if (typeof route.path !== 'string' || !route.path.startsWith('/')) {
    throw new InvalidArgumentError(
      `${where}.path: expected a path starting with /, got ${JSON.stringify(route.path)}`,
    )
  }
  const { operation } = route
  if (operation !== 'authenticated' && operation !== 'public' && operationSpec(operation) === undefined) {
    throw new InvalidArgumentError(
      `${where}.operation: unknown operation ${JSON.stringify(operation)}; expected one of ${OPERATION_NAMES.join(', ')}, 'authenticated' or 'public'`,
    )
  }
}

/**
 * The OpenAPI `paths` of a host's routes, for hosts without a generator of their own: each route
 * gets its path parameters, a summary naming the operation and its minimal scope, and everything
 * {@link operationSecurity} says about it; a route's own `responses` win for their status.
 *
 * @throws {InvalidArgumentError} naming a route with a bad method, path or operation, or two routes
 * with the same method and path.
 * @example
 * const paths = describeRoutes([
 *   { method: 'GET', path: '/api/v1/datasets/:owner/:name/metadata', operation: 'dataset.metadata' },
 *   { method: 'POST', path: '/oauth/token', operation: 'public' },
 * ])
 * paths['/api/v1/datasets/{owner}/{name}/metadata']?.get?.security // [{ bearer: ['data.metadata'] }]
 */
export function describeRoutes(routes: readonly RouteDescription[], options?: OpenApiOptions): PathsObject {
  if (!Array.isArray(routes)) throw new InvalidArgumentError('routes: expected an array of routes')
  const paths: PathsObject = {}
  routes.forEach((route, index) => {
    checkRoute(route, index)
    const { path, parameters } = openApiPath(route.path)
    const method = route.method.toLowerCase()
    paths[path] ??= {}
    const item = paths[path]
    if (item[method] !== undefined) {
      throw new InvalidArgumentError(
        `routes[${index}]: ${route.method.toUpperCase()} ${route.path} is described twice`,
      )
    }
    const owned = operationSecurity(route.operation, options)
    item[method] = {
      summary: route.summary ?? defaultSummary(route.operation),
      ...(route.description === undefined ? {} : { description: route.description }),
      ...(route.tags === undefined ? {} : { tags: [...route.tags] }),
      ...(parameters.length === 0
        ? {}
        : {
            parameters: parameters.map(
              (name): PathParameterObject => ({
                name,
                in: 'path',
                required: true,
                schema: { type: 'string' },
              }),
            ),
          }),
      ...owned,
      responses: {
        ...(route.responses === undefined ? { '200': { description: 'Success.' } } : {}),
        ...owned.responses,
        ...route.responses,
      },
    }
  })
  return paths
}
