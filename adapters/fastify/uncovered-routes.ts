import type { FastifyContextConfig, FastifyInstance, RouteOptions } from 'fastify'
import { deny } from '../../src/decisions/decision.js'
import { ConfigError } from '../../src/errors.js'
import type { AccessPolicy, Operation } from '../../src/index.js'
import type { OpenApiOptions } from '../../src/openapi/index.js'
import { policyHooks } from '../../src/policy.js'
import { checkRouteAccess } from '../shared/route-access.js'
import { describeAccess } from './openapi.js'

/**
 * The mark a plugin instance's `onRoute` hook leaves in the config of every route whose
 * `config.access` it covers. Fastify copies a route's config (symbol keys included) into the
 * route's context, so a request reads the mark of the very route that serves it: whatever selected
 * that route (method, URL, a `host` or `version` constraint, a custom one), and its automatic HEAD
 * route too, which goes through `onRoute` itself. A method and URL would tell apart none of those.
 */
export const COVERED: unique symbol = Symbol('data-access-policy.covered')

/**
 * Registered inside an encapsulated plugin (an `/api` prefix layout, say), the plugin's hooks reach
 * only that plugin's routes: a route declared elsewhere with `config.access` would be served
 * unguarded. Fastify attaches an instance's hooks to its routes when it gets ready, so a hook on the
 * root instance reaches the routes declared there (and in plugins registered after this one), and
 * refuses those that no instance of the plugin covers (no {@link COVERED} mark): 503, with a
 * `ConfigError` naming the route and the fix told to `onError`. A route another instance covers (a
 * sibling scope's) is that instance's to guard. Encapsulated instances inherit from their parent
 * (`Object.create`), which is how the root is found.
 *
 * @example
 * guardUncoveredRoutes(fastify, policy)
 */
export function guardUncoveredRoutes(fastify: FastifyInstance, policy: AccessPolicy): void {
  let root: FastifyInstance = fastify
  for (;;) {
    const parent: unknown = Object.getPrototypeOf(root)
    if (typeof (parent as Partial<FastifyInstance> | null)?.addHook !== 'function') break
    root = parent as FastifyInstance
  }
  if (root === fastify) return
  root.addHook('onRequest', async function refuseUncoveredRoute(request, reply) {
    const config = request.routeOptions.config as { access?: unknown; [COVERED]?: true }
    if (config.access === undefined || config[COVERED] === true) return
    policyHooks(policy).error(
      new ConfigError(
        ['config', 'access'],
        `${request.method} ${request.routeOptions.url} declares access but the data-access-policy plugin does not cover it; register the plugin on the instance (or a parent of the plugin) that declares the route`,
      ),
      'adapter',
    )
    const rendered = policy.render(deny('service_unavailable'))
    return reply.code(rendered.status).headers(rendered.headers).send(rendered.body)
  })
}

/**
 * The plugin's `onRoute` step for a route with `config.access`: checks its requirement when it is
 * declared, so that a typo fails at startup; marks it {@link COVERED} in its own config; and,
 * unless `openapi` is `false`, describes it in the route options `@fastify/swagger` keeps — here,
 * before Fastify builds the route's context, so the document reads them whatever the plugins' order.
 *
 * @example
 * fastify.addHook('onRoute', (route) => coverRoute(route, openapi))
 */
export function coverRoute(route: RouteOptions, openapi: OpenApiOptions | false): void {
  const access = route.config?.access
  if (access === undefined) return
  route.config = { ...route.config, [COVERED]: true } as FastifyContextConfig
  let requirement: Operation | 'authenticated' = 'authenticated'
  if (access.operation !== undefined || access.resource !== undefined) {
    const methods = Array.isArray(route.method) ? route.method : [route.method]
    requirement = checkRouteAccess(access.operation, access.resource, `${methods.join(',')} ${route.url}`)
  }
  if (openapi !== false) describeAccess(route, requirement, openapi)
}
