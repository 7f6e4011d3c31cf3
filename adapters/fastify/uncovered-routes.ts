import type { FastifyInstance } from 'fastify'
import { deny } from '../../src/decisions/decision.js'
import { ConfigError } from '../../src/errors.js'
import type { AccessPolicy } from '../../src/index.js'
import { policyHooks } from '../../src/policy.js'

/**
 * The key of a route in the set of those the plugin covers.
 *
 * @example
 * routeKey('GET', '/api/v1/datasets/:owner/:name') // 'GET /api/v1/datasets/:owner/:name'
 */
export function routeKey(method: string, url: string): string {
  return `${method} ${url}`
}

/**
 * Registered inside an encapsulated plugin (an `/api` prefix layout, say), the plugin's hooks reach
 * only that plugin's routes: a route declared elsewhere with `config.access` would be served
 * unguarded. Fastify attaches an instance's hooks to its routes when it gets ready, so a hook on the
 * root instance reaches the routes declared there (and in plugins registered after this one), and
 * refuses those the plugin does not cover: 503, with a `ConfigError` naming the route and the fix
 * told to `onError`. Encapsulated instances inherit from their parent (`Object.create`), which is
 * how the root is found.
 *
 * @example
 * guardUncoveredRoutes(fastify, policy, covered)
 */
export function guardUncoveredRoutes(
  fastify: FastifyInstance,
  policy: AccessPolicy,
  covered: ReadonlySet<string>,
): void {
  let root: FastifyInstance = fastify
  for (;;) {
    const parent: unknown = Object.getPrototypeOf(root)
    if (typeof (parent as Partial<FastifyInstance> | null)?.addHook !== 'function') break
    root = parent as FastifyInstance
  }
  if (root === fastify) return
  root.addHook('onRequest', async function refuseUncoveredRoute(request, reply) {
    const access = request.routeOptions.config.access
    if (access === undefined || covered.has(routeKey(request.method, request.routeOptions.url ?? ''))) return
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
