import { METHODS } from 'node:http'
import { InvalidArgumentError } from '../../src/index.js'
import type { RouteDescription, RouteRequirement } from '../../src/openapi/index.js'

// What a middleware of `accessControl` checks, on the function itself: `require` tags its guard with
// the operation, `authenticate` with `authenticated`, each with the policy it checks for. A symbol,
// non-enumerable: invisible to the host, and Express copies nothing of it. A walk lists the routes
// of its own policy (every adapter instance of it), never another policy's: in an app with two,
// each document describes its own routes with its own schemes.
const REQUIREMENT = Symbol('data-access-policy.requirement')

interface Tag {
  readonly requirement: RouteRequirement
  readonly owner: object
}

type Tagged = { [REQUIREMENT]?: Tag }

/** Tags `handler` with what it checks for the policy `owner`; returns it. */
export function tagRequirement<T extends object>(
  handler: T,
  requirement: RouteRequirement,
  owner: object,
): T {
  Object.defineProperty(handler, REQUIREMENT, { value: { requirement, owner } satisfies Tag })
  return handler
}

/** What `handler` checks, when it is a middleware of `accessControl` for the policy `owner`. */
export function requirementOf(handler: unknown, owner: object): RouteRequirement | undefined {
  const tag = typeof handler === 'function' ? (handler as Tagged)[REQUIREMENT] : undefined
  return tag?.owner === owner ? tag.requirement : undefined
}

/**
 * A guarded route that {@link ExpressAccessControl.routes} could not describe, with the reason: its
 * path (or its router's mount path) is a regular expression or uses wildcards or optional parts,
 * which no OpenAPI path says; its method is not one OpenAPI has; or it is guarded for all methods
 * (`app.all`, `router.use` on its own path) with no method of its own.
 */
export interface SkippedRoute {
  /** The method, upper case, when the route has one. */
  readonly method?: string
  /** The path as written: a string, or the source of a regular expression. */
  readonly path: string
  /** What the route's guard checks. */
  readonly requirement: RouteRequirement
  /** Why it is not in the list, in words. */
  readonly reason: string
}

/** Options of {@link ExpressAccessControl.routes} with an app. */
export interface ExpressRoutesOptions {
  /** Told of each guarded route left out of the list; default: none. */
  readonly onSkip?: (skipped: SkippedRoute) => void
}

// The router 2.x internals the walk reads (Express 5's `app.router`, or a `Router()`).
interface RouterLayer {
  readonly handle?: unknown
  /** The path `use` or `route` was given: a string, an array of them, or a RegExp (router ≥ 2.3). */
  readonly rawPath?: unknown
  readonly method?: string
  readonly route?: {
    readonly path: unknown
    readonly methods: Record<string, boolean | undefined>
    readonly stack: readonly RouterLayer[]
  }
}

// OpenAPI's methods: a route on another one (`PROPFIND`) cannot be described.
const OPENAPI_METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'])

// path-to-regexp 8 (Express 5) spells wildcards `*name` and optional parts `{…}`; with a RegExp or
// an escape, none of them has an OpenAPI path. Plain segments and `:name` parameters do.
const PLAIN_PATH = /^\/[^*{}()\\?+]*$/

// A path as the host wrote it, under the prefix of its mount when it is a string.
function written(path: unknown, prefix = ''): string {
  if (typeof path === 'string') return join(prefix, path)
  return path instanceof RegExp ? String(path) : JSON.stringify(path)
}

// Every string the path stands for, or undefined when one of them has no OpenAPI path.
function plainPaths(path: unknown): string[] | undefined {
  const paths = Array.isArray(path) ? path.flat(Number.POSITIVE_INFINITY) : [path]
  if (paths.length === 0 || !paths.every((one) => typeof one === 'string' && PLAIN_PATH.test(one))) {
    return undefined
  }
  return paths as string[]
}

function join(prefix: string, path: string): string {
  if (path === '/') return prefix === '' ? '/' : prefix
  return `${prefix}${path}`
}

// A guard mounted with `use` covers the routes under its path: a path prefix, at a segment boundary.
function covers(prefix: string, path: string): boolean {
  return prefix === '' || path === prefix || path.startsWith(`${prefix}/`)
}

// With both, the operation: `require` authenticates too, and checks more than `authenticate`.
function strongest(requirements: readonly RouteRequirement[]): RouteRequirement | undefined {
  return requirements.find((one) => one !== 'authenticated') ?? requirements[0]
}

interface Guard {
  readonly prefix: string
  readonly requirement: RouteRequirement
}

interface Walk {
  /** The policy whose guards are listed. */
  readonly owner: object
  readonly found: RouteDescription[]
  readonly seen: Set<unknown>
  readonly skip: (skipped: SkippedRoute) => void
}

function walkRoute(
  walk: Walk,
  prefix: string,
  guards: readonly Guard[],
  route: NonNullable<RouterLayer['route']>,
): void {
  const own = route.stack.filter((layer) => requirementOf(layer.handle, walk.owner) !== undefined)
  for (const layer of own) walk.seen.add(layer.handle)
  const listed = Object.keys(route.methods).filter((method) => method !== '_all' && route.methods[method])
  // `app.all` registers every method Node knows one by one: that is a route for all methods, as is a
  // route with `.all()` handlers and no method of its own.
  const everyMethod = METHODS.every((method) => route.methods[method.toLowerCase()])
  const methods = everyMethod ? [] : listed
  const paths = plainPaths(route.path)
  // Per method: the guards of its own layers and of the layers for all methods, after the inherited.
  const describe = (method: string | undefined, path: string) => {
    const local = own
      .filter((layer) => method === undefined || layer.method === undefined || layer.method === method)
      .map((layer) => requirementOf(layer.handle, walk.owner)!)
    const inherited = guards.filter((guard) => covers(guard.prefix, path)).map((guard) => guard.requirement)
    return strongest([...inherited, ...local])
  }
  if (paths === undefined) {
    const requirement = strongest(own.map((layer) => requirementOf(layer.handle, walk.owner)!))
    if (requirement === undefined) return
    const path = written(route.path, prefix)
    const reason = `path ${path} is not a plain path (a RegExp, a wildcard or an optional part)`
    for (const method of methods.length === 0 ? [undefined] : methods) {
      walk.skip({
        ...(method === undefined ? {} : { method: method.toUpperCase() }),
        path,
        requirement,
        reason,
      })
    }
    return
  }
  for (const relative of paths) {
    const path = join(prefix, relative)
    if (methods.length === 0) {
      const requirement = describe(undefined, path)
      if (requirement !== undefined) {
        walk.skip({ path, requirement, reason: 'guarded for all methods (`all`), not per method' })
      }
      continue
    }
    for (const method of methods) {
      const requirement = describe(method, path)
      if (requirement === undefined) continue
      if (!OPENAPI_METHODS.has(method)) {
        walk.skip({
          method: method.toUpperCase(),
          path,
          requirement,
          reason: 'not a method OpenAPI describes',
        })
        continue
      }
      walk.found.push({ method: method.toUpperCase(), path, operation: requirement })
    }
  }
}

function walkStack(
  walk: Walk,
  prefix: string,
  inherited: readonly Guard[],
  stack: readonly RouterLayer[],
): void {
  const guards = [...inherited]
  for (const layer of stack) {
    if (layer.route !== undefined) {
      walkRoute(walk, prefix, guards, layer.route)
      continue
    }
    const requirement = requirementOf(layer.handle, walk.owner)
    const child = (layer.handle as { stack?: unknown } | undefined)?.stack
    if (requirement === undefined && !Array.isArray(child)) continue
    if (requirement !== undefined) walk.seen.add(layer.handle)
    const paths = plainPaths(layer.rawPath)
    if (paths === undefined) {
      // Router 2.2 and older keep no mount path; a RegExp mount path has no OpenAPI path.
      const path = layer.rawPath === undefined ? '(unknown)' : written(layer.rawPath, prefix)
      const reason =
        layer.rawPath === undefined
          ? 'the router keeps no mount path (router 2.3 or later does)'
          : `mount path ${path} is not a plain path (a RegExp, a wildcard or an optional part)`
      if (requirement !== undefined) walk.skip({ path, requirement, reason })
      if (Array.isArray(child)) {
        const hidden: Walk = { ...walk, found: [] }
        walkStack(hidden, '', [], child as RouterLayer[])
        for (const route of hidden.found) {
          walk.skip({ method: route.method, path: route.path, requirement: route.operation, reason })
        }
      }
      continue
    }
    for (const path of paths) {
      // Without its trailing slash: the routes under it start with one.
      const base = path === '/' ? prefix : `${prefix}${path.replace(/\/+$/, '')}`
      if (requirement !== undefined) guards.push({ prefix: base, requirement })
      else walkStack(walk, base, guards, child as RouterLayer[])
    }
  }
}

/**
 * The routes of an Express 5 app or `Router` that `owner`'s guards guard, found by walking its
 * router (mounted routers included), then the routes of `registered` whose guard the walk did not
 * meet, as registered.
 *
 * @throws {InvalidArgumentError} when `app` is neither an Express 5 app nor a router.
 */
export function walkRoutes(
  app: unknown,
  owner: object,
  registered: ReadonlyMap<unknown, RouteDescription>,
  options: ExpressRoutesOptions = {},
): RouteDescription[] {
  const router = (app as { router?: unknown } | undefined)?.router ?? app
  const stack = (router as { stack?: unknown } | undefined)?.stack
  if (typeof router !== 'function' || !Array.isArray(stack)) {
    throw new InvalidArgumentError('routes(app): expected an Express 5 app or a Router')
  }
  const walk: Walk = { owner, found: [], seen: new Set(), skip: options.onSkip ?? (() => {}) }
  walkStack(walk, '', [], stack as RouterLayer[])
  for (const [handle, route] of registered) {
    if (!walk.seen.has(handle)) walk.found.push(route)
  }
  // Express answers with the first route that matches: a second one on the same method and path is
  // never reached, and `describeRoutes` takes each once.
  const unique = new Map<string, RouteDescription>()
  for (const route of walk.found)
    unique.set(`${route.method} ${route.path}`, unique.get(`${route.method} ${route.path}`) ?? route)
  return [...unique.values()]
}
