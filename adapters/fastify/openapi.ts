import type { FastifySchema, RouteOptions } from 'fastify'
import {
  DATA_ACCESS_EXTENSION,
  type OpenApiOptions,
  operationSecurity,
  type ResponseObject,
  type RouteRequirement,
} from '../../src/openapi/index.js'

// What the plugin's `onRoute` wrote into a route's schema by itself (see `describeAccess`), kept in
// the route's config: the transform tells it from what the host wrote, and replaces it with what its
// own options say. JSON, so that a host transform that copies the schema deeply changes nothing.
const AUTOMATIC = Symbol('data-access-policy.openapi')

interface Automatic {
  security?: string
  extension?: string
}

type DescribedRoute = Pick<RouteOptions, 'config' | 'schema'>

/**
 * Documents a route with `config.access` in its own schema, for `@fastify/swagger` to read when it
 * builds the document: `security` and `x-data-access`, where the host wrote neither. Both are keys
 * Fastify ignores at run time (it validates `body`, `querystring`, `params` and `headers`, and
 * serializes by `response`); the denial responses are not added, since a `response` schema would
 * make Fastify serialize the host's own bodies by it. Call it from `onRoute`, before the route's
 * context is built, with the route's checked requirement.
 */
export function describeAccess(
  route: DescribedRoute,
  requirement: RouteRequirement,
  options: OpenApiOptions,
): void {
  const owned = operationSecurity(requirement, options)
  const schema = (route.schema ?? {}) as FastifySchema & Record<string, unknown>
  const automatic: Automatic = {}
  const added: Record<string, unknown> = {}
  if (schema.security === undefined) {
    added.security = owned.security
    automatic.security = JSON.stringify(owned.security)
  }
  if (schema[DATA_ACCESS_EXTENSION] === undefined) {
    added[DATA_ACCESS_EXTENSION] = owned[DATA_ACCESS_EXTENSION]
    automatic.extension = JSON.stringify(owned[DATA_ACCESS_EXTENSION])
  }
  // A new object: a schema the host shares between routes is never changed under it.
  route.schema = { ...schema, ...added } as FastifySchema
  route.config = { ...route.config, [AUTOMATIC]: automatic } as NonNullable<RouteOptions['config']>
}

// The host's own value of a key, or undefined where the plugin wrote it by itself.
function hostValue(value: unknown, automatic: string | undefined): unknown {
  return automatic !== undefined && JSON.stringify(value) === automatic ? undefined : value
}

/** What `@fastify/swagger` passes a `transform` for each route (the parts read here). */
export interface OpenApiTransformInput {
  /** The route's schema, as the host wrote it (absent when it wrote none). */
  readonly schema?: FastifySchema
  /** The route's URL. */
  readonly url: string
  /** The route's options, whose `config.access` names the requirement. */
  readonly route: Pick<RouteOptions, 'config'>
}

/** What a `transform` of `@fastify/swagger` returns: the schema and URL to document the route with. */
export interface OpenApiTransformResult {
  readonly schema: FastifySchema
  readonly url: string
}

/** A `transform` for `@fastify/swagger`. */
export type OpenApiTransform = (input: OpenApiTransformInput) => OpenApiTransformResult

/** Options of {@link openApiTransform}: the document's options, and a transform of the host's own. */
export interface OpenApiTransformOptions extends OpenApiOptions {
  /** The host's own transform, run first: what it returns wins where both set a field. */
  readonly transform?: OpenApiTransform
}

// The policy's fields in the form a Fastify route schema documents a response: headers as JSON
// Schemas (with their description), the body under `content`.
function routeResponse(response: ResponseObject): Record<string, unknown> {
  const headers =
    response.headers === undefined
      ? {}
      : {
          headers: Object.fromEntries(
            Object.entries(response.headers).map(([name, header]) => [
              name,
              { ...header.schema, description: header.description },
            ]),
          ),
        }
  return { description: response.description, ...headers, content: response.content }
}

/**
 * A `transform` for `@fastify/swagger` that documents every route with `config.access`: its
 * `security` (the operation's minimal scope; `config.access: {}` any valid token), its denial
 * responses and `x-data-access`, merged into the schema the host wrote, the host's own fields
 * winning where both set one (its `security`, a response status it describes). Routes without
 * `config.access` pass through as the host's transform (if any) left them. It changes what the
 * document says only: the route's schema at run time (validation, serialization) is untouched.
 * The `security` and `x-data-access` the plugin writes into a route's schema by itself are not the
 * host's: the transform replaces them with what its own options say, so it may be added or left
 * out at will.
 *
 * @throws {InvalidArgumentError} naming a bad option (`options.issuer`, `options.openapi`).
 * @example
 * await app.register(swagger, {
 *   openapi: {
 *     openapi: '3.1.0',
 *     info: { title: 'Data API', version: '1' },
 *     components: { securitySchemes: securitySchemes() },
 *   },
 *   transform: openApiTransform(),
 * })
 */
export function openApiTransform(options: OpenApiTransformOptions = {}): OpenApiTransform {
  const { transform, ...documentOptions } = options
  // Checked now, so that a bad option fails at registration rather than when the document is built.
  operationSecurity('authenticated', documentOptions)
  return function dataAccessTransform(input) {
    const base = transform === undefined ? { schema: input.schema ?? {}, url: input.url } : transform(input)
    const access = input.route.config?.access
    if (access === undefined) return base
    const requirement: RouteRequirement = access.operation ?? 'authenticated'
    const owned = operationSecurity(requirement, documentOptions)
    const schema = (base.schema ?? {}) as FastifySchema & {
      security?: unknown
      response?: Record<string, unknown>
      [DATA_ACCESS_EXTENSION]?: unknown
    }
    const automatic = (input.route.config as { [AUTOMATIC]?: Automatic } | undefined)?.[AUTOMATIC] ?? {}
    const denials = Object.fromEntries(
      Object.entries(owned.responses).map(([status, response]) => [status, routeResponse(response)]),
    )
    // Without a response of the host's own, @fastify/swagger would say "200: Default Response":
    // the denials must not be all the route answers.
    const success = schema.response === undefined ? { 200: { description: 'Default Response' } } : {}
    return {
      url: base.url,
      schema: {
        ...schema,
        [DATA_ACCESS_EXTENSION]:
          hostValue(schema[DATA_ACCESS_EXTENSION], automatic.extension) ?? owned[DATA_ACCESS_EXTENSION],
        security: hostValue(schema.security, automatic.security) ?? owned.security,
        response: { ...success, ...denials, ...schema.response },
      } as unknown as FastifySchema,
    }
  }
}
