// The routes the HTTP benchmark serves, shared by the parent (bench/http.ts) and the server process.

/** The routes each framework serves: unguarded, guarded by this library, its own bearer plugin. */
export const BENCH_ROUTES = {
  express: ['open', 'guarded'],
  fastify: ['open', 'guarded', 'bearer'],
  hono: ['open', 'guarded', 'bearer'],
} as const

/** The path of a route: the same shape on every route, `…/datasets/:owner/:name/metadata`. */
export const benchPath = (route: string) => `/${route}/datasets/alice/census/metadata`
