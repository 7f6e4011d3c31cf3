// A benchmark server in a child process: one framework, its routes written as the README writes
// them, from the built package (`data-access-policy/…`, what hosts import). The parent asks for the
// CPU time spent between 'start' and 'stop' messages, so cost is measured as server CPU per request.
//
// Routes, all on the same path shape `/…/datasets/:owner/:name/metadata`:
// - `open`: no guard;
// - `guarded`: `require('dataset.metadata', resolver)`, the resolver answering a constant dataset
//   from the route's params and the principal, as a host's would after its database lookup;
// - `floor`: the least a hand-written bearer guard with the same resolver does: the header's token,
//   its SHA-256, the store lookup, the record's status, the resolver and the scope; no checksum,
//   transport, body or garbage-record check, no hooks: the yardstick for the guard's cost;
// - `bearer`: the framework's own bearer plugin (Fastify, Hono), which compares a static string.
import { hash } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import { createRequire } from 'node:module'
import type { AddressInfo } from 'node:net'
import bearerAuthPlugin from '@fastify/bearer-auth'
import { serve } from '@hono/node-server'
import { getConnInfo } from '@hono/node-server/conninfo'
import {
  createAccessPolicy,
  createApiToken,
  type DatasetResource,
  MemoryTokenStore,
  type Principal,
} from 'data-access-policy'
import { accessControl as expressAccess } from 'data-access-policy/express'
import { type FastifyResourceResolver, accessControl as fastifyAccess } from 'data-access-policy/fastify'
import { type AccessEnv, accessControl as honoAccess } from 'data-access-policy/hono'
import { fastify } from 'fastify'
import { type Context, Hono } from 'hono'
import { bearerAuth } from 'hono/bearer-auth'
import { BENCH_ROUTES } from './http-routes.js'

const require = createRequire(import.meta.url)
const express = require('express') as typeof import('express')

type DatasetParams = { owner: string; name: string }

// What the host's database lookup would answer: the same dataset for every request.
const DATASET: DatasetResource = Object.freeze({
  kind: 'dataset',
  publicLevel: 'none',
  userLevel: 'metadata',
})
function describe(params: DatasetParams, principal: Principal): DatasetResource | undefined {
  return params.owner === 'alice' && principal.userId === 'alice' ? DATASET : undefined
}
const metadataOf = ({ owner, name }: DatasetParams) => ({ owner, name, title: 'Census' })

// The floor guard's decision: true for a header whose token is active, has the scope and names an
// existing dataset (the benchmark only sends allowed requests).
function floorAdmits(tokens: MemoryTokenStore, header: string | undefined, params: DatasetParams): boolean {
  if (header === undefined || !header.startsWith('Bearer ')) return false
  const record = tokens.findByHash(hash('sha256', header.slice(7), 'hex'))
  if (record === undefined || record.revokedAt !== undefined) return false
  if (record.expiresAt !== undefined && !(Date.now() < record.expiresAt)) return false
  const principal = { kind: 'token', userId: record.userId } as Principal
  return describe(params, principal) !== undefined && record.scopes.includes('data.metadata')
}

// The floor's header on Hono, read from the Node message, as the adapter reads its headers:
// `c.req.header()` has @hono/node-server first build a Fetch `Headers` from every raw header, work
// the adapter does not do, and the floor is the least a guard does.
function rawAuthorization(c: Context): string | undefined {
  return (c.env as { incoming: IncomingMessage }).incoming.headers.authorization
}

// The `pass` route's middleware: the framework's own cost of one more step on a route.
const passThrough = (_req: unknown, _res: unknown, next: () => void) => next()

async function start(
  framework: string,
  policy: ReturnType<typeof createAccessPolicy>,
  tokens: MemoryTokenStore,
  token: string,
) {
  if (framework === 'express') {
    const app = express().set('trust proxy', 'loopback')
    const access = expressAccess({ policy })
    app.get('/open/datasets/:owner/:name/metadata', (req, res) => res.json(metadataOf(req.params)))
    app.get(
      '/guarded/datasets/:owner/:name/metadata',
      access.require<DatasetParams>('dataset.metadata', (req) => describe(req.params, req.principal)),
      (req, res) => res.json(metadataOf(req.params)),
    )
    app.get('/pass/datasets/:owner/:name/metadata', passThrough, (req, res) =>
      res.json(metadataOf(req.params)),
    )
    app.get<'/floor/datasets/:owner/:name/metadata', DatasetParams>(
      '/floor/datasets/:owner/:name/metadata',
      (req, res, next) => {
        if (floorAdmits(tokens, req.headers.authorization, req.params)) next()
        else res.status(401).end()
      },
      (req, res) => res.json(metadataOf(req.params)),
    )
    const server = app.listen(0, '127.0.0.1')
    await new Promise((resolve) => server.once('listening', resolve))
    return (server.address() as AddressInfo).port
  }
  if (framework === 'fastify') {
    const app = fastify({ trustProxy: 'loopback' })
    await app.register(fastifyAccess, { policy })
    const dataset: FastifyResourceResolver<DatasetParams> = (req) => describe(req.params, req.principal)
    app.get<{ Params: DatasetParams }>('/open/datasets/:owner/:name/metadata', async (req) =>
      metadataOf(req.params),
    )
    app.get<{ Params: DatasetParams }>(
      '/guarded/datasets/:owner/:name/metadata',
      { config: { access: { operation: 'dataset.metadata', resource: dataset } } },
      async (req) => metadataOf(req.params),
    )
    app.get<{ Params: DatasetParams }>(
      '/pass/datasets/:owner/:name/metadata',
      { preHandler: (_req, _reply, done) => done() },
      async (req) => metadataOf(req.params),
    )
    app.get<{ Params: DatasetParams }>(
      '/floor/datasets/:owner/:name/metadata',
      {
        preHandler: (req, reply, done) => {
          if (floorAdmits(tokens, req.headers.authorization, req.params)) done()
          else reply.code(401).send()
        },
      },
      async (req) => metadataOf(req.params),
    )
    await app.register(async (scoped) => {
      await scoped.register(bearerAuthPlugin, { keys: new Set([token]) })
      scoped.get<{ Params: DatasetParams }>('/bearer/datasets/:owner/:name/metadata', async (req) =>
        metadataOf(req.params),
      )
    })
    await app.listen({ port: 0, host: '127.0.0.1' })
    return (app.server.address() as AddressInfo).port
  }
  const app = new Hono<AccessEnv>()
  const access = honoAccess({ policy, getConnInfo, trustProxy: 'loopback' })
  app.get('/open/datasets/:owner/:name/metadata', (c) => c.json(metadataOf(c.req.param())))
  app.get(
    '/guarded/datasets/:owner/:name/metadata',
    access.require<'/:owner/:name'>('dataset.metadata', (c) => describe(c.req.param(), c.get('principal'))),
    (c) => c.json(metadataOf(c.req.param())),
  )
  app.get(
    '/pass/datasets/:owner/:name/metadata',
    (_c, next) => next(),
    (c) => c.json(metadataOf(c.req.param())),
  )
  app.get(
    '/floor/datasets/:owner/:name/metadata',
    (c, next) => {
      if (floorAdmits(tokens, rawAuthorization(c), c.req.param())) return next()
      return Promise.resolve(c.body(null, 401))
    },
    (c) => c.json(metadataOf(c.req.param())),
  )
  app.get('/bearer/datasets/:owner/:name/metadata', bearerAuth({ token }), (c) =>
    c.json(metadataOf(c.req.param())),
  )
  return new Promise<number>((resolve) => {
    serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) => resolve(info.port))
  })
}

{
  const framework = process.argv[2] ?? ''
  if (!Object.hasOwn(BENCH_ROUTES, framework))
    throw new Error(`unknown framework ${JSON.stringify(framework)}`)
  const tokens = new MemoryTokenStore()
  const { record, value } = createApiToken({
    userId: 'alice',
    name: 'bench',
    scopes: 'data.metadata',
    now: Date.now(),
  })
  await tokens.save(record)
  const policy = createAccessPolicy({ tokens })
  const port = await start(framework, policy, tokens, value)
  let since = process.cpuUsage()
  process.on('message', (message: string) => {
    if (message === 'start') since = process.cpuUsage()
    if (message === 'stop') {
      const used = process.cpuUsage(since)
      process.send?.({ cpuMicros: used.user + used.system })
    }
    if (message === 'exit') process.exit(0)
  })
  process.send?.({ port, token: value })
}
