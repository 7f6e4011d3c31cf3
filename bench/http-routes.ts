// The routes the HTTP benchmark serves, shared by the parent (bench/http.ts) and the server process.

/**
 * The routes each framework serves: unguarded, guarded by this library, guarded by the least a
 * hand-written bearer guard with the same resolver does (the floor), and its own bearer plugin.
 */
export const BENCH_ROUTES = {
  express: ['open', 'pass', 'guarded', 'floor'],
  fastify: ['open', 'pass', 'guarded', 'floor', 'bearer'],
  hono: ['open', 'pass', 'guarded', 'floor', 'bearer'],
} as const

/** The path of a route: the same shape on every route, `…/datasets/:owner/:name/metadata`. */
export const benchPath = (route: string) => `/${route}/datasets/alice/census/metadata`
