import type { FastifySchema, RouteOptions } from 'fastify'
import {
  DATA_ACCESS_EXTENSION,
  type OpenApiOptions,
  operationSecurity,
  type ResponseObject,
  type RouteRequirement,
} from '../../src/openapi/index.js'

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
    }
    const denials = Object.fromEntries(
      Object.entries(owned.responses).map(([status, response]) => [status, routeResponse(response)]),
    )
    // Without a response of the host's own, @fastify/swagger would say "200: Default Response":
    // the denials must not be all the route answers.
    const success = schema.response === undefined ? { 200: { description: 'Default Response' } } : {}
    return {
      url: base.url,
      schema: {
        [DATA_ACCESS_EXTENSION]: owned[DATA_ACCESS_EXTENSION],
        ...schema,
        security: schema.security ?? owned.security,
        response: { ...success, ...denials, ...schema.response },
      } as FastifySchema,
    }
  }
}
