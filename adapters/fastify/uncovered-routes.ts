import type { FastifyInstance } from 'fastify'
import { deny } from '../../src/decisions/decision.js'
import { ConfigError } from '../../src/errors.js'
import type { AccessPolicy } from '../../src/index.js'
import { policyHooks } from '../../src/policy.js'

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
