// A benchmark server in a child process: one framework, three routes — unguarded, guarded by
// data-access-policy, and (Fastify, Hono) guarded by the framework's own bearer-auth. The parent
// asks for the CPU time spent between 'start' and 'stop' messages, so cost is measured as server
// CPU per request, not only as req/s.
import { createRequire } from 'node:module'
import type { AddressInfo } from 'node:net'
import bearerAuthPlugin from '@fastify/bearer-auth'
import { serve } from '@hono/node-server'
import { getConnInfo } from '@hono/node-server/conninfo'
import { fastify } from 'fastify'
import { Hono } from 'hono'
import { bearerAuth } from 'hono/bearer-auth'
import { accessControl as expressAccess } from '../adapters/express/index.js'
import { accessControl as fastifyAccess } from '../adapters/fastify/index.js'
import { type AccessEnv, accessControl as honoAccess } from '../adapters/hono/index.js'
import { createAccessPolicy, MemoryTokenStore, type Resource } from '../src/index.js'
import { createApiToken } from '../src/tokens/token-record.js'

const require = createRequire(import.meta.url)
const express = require('express') as typeof import('express')

const framework = process.argv[2]
const tokens = new MemoryTokenStore()
const { record, value } = createApiToken({
  userId: 'alice',
  name: 'bench',
  scopes: 'data.overview',
  now: Date.now(),
})
await tokens.save(record)
const policy = createAccessPolicy({ tokens })
const dataset: Resource = { kind: 'dataset', publicLevel: 'none', userLevel: 'overview' }
const describe = () => dataset
const hello = { hello: 'world' }

async function start(): Promise<number> {
  if (framework === 'express') {
    const app = express()
    const access = expressAccess({ policy })
    app.get('/unguarded', (_req, res) => res.json(hello))
    app.get('/guarded', access.require('dataset.overview', describe), (_req, res) => res.json(hello))
    const server = app.listen(0, '127.0.0.1')
    await new Promise((resolve) => server.once('listening', resolve))
    return (server.address() as AddressInfo).port
  }
  if (framework === 'fastify') {
    const app = fastify()
    await app.register(fastifyAccess, { policy })
    app.get('/unguarded', async () => hello)
    app.get(
      '/guarded',
      { config: { access: { operation: 'dataset.overview', resource: describe } } },
      async () => hello,
    )
    await app.register(async (scoped) => {
      await scoped.register(bearerAuthPlugin, { keys: new Set([value]) })
      scoped.get('/bearer', async () => hello)
    })
    await app.listen({ port: 0, host: '127.0.0.1' })
    return (app.server.address() as AddressInfo).port
  }
  const app = new Hono<AccessEnv>()
  const access = honoAccess({ policy, getConnInfo })
  app.get('/unguarded', (c) => c.json(hello))
  app.get('/guarded', access.require('dataset.overview', describe), (c) => c.json(hello))
  app.get('/bearer', bearerAuth({ token: value }), (c) => c.json(hello))
  return new Promise((resolve) => {
    const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) => resolve(info.port))
    void server
  })
}

const port = await start()
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
