import type { Server } from 'node:http'
import { serve } from '@hono/node-server'
import { getConnInfo } from '@hono/node-server/conninfo'
import { type Context, Hono } from 'hono'
import { type AccessEnv, accessControl } from '../../adapters/hono/index.js'
import { deny } from '../../src/index.js'
import { bodies, countParameter, type Fixture, streamChunks } from './fixture.js'
import { listening } from './listen.js'
import type { RunningApp } from './running-app.js'

/**
 * The adapters' test app on Hono 4 over @hono/node-server, with the default (strict) router.
 *
 * @example
 * const app = await startHonoApp(fixture, '127.0.0.1')
 */
export async function startHonoApp(fixture: Fixture, trustProxy: string | false): Promise<RunningApp> {
  const app = new Hono<AccessEnv>()
  const access = accessControl({ policy: fixture.policy, getConnInfo, trustProxy })
  const dataset = (c: Context<AccessEnv>) =>
    fixture.describe(c.req.param('owner'), c.req.param('name'), c.get('principal'))
  const json = (c: Context, body: string) => c.body(body, 200, { 'content-type': 'application/json' })

  app.get('/api/v1/datasets/:owner/:name', access.require('dataset.overview', dataset), (c) =>
    json(c, bodies.overview(c.req.param('owner'), c.req.param('name'))),
  )
  app.get('/api/v1/datasets/:owner/:name/metadata', access.require('dataset.metadata', dataset), (c) =>
    json(c, bodies.metadata(c.req.param('owner'), c.req.param('name'))),
  )
  app.get('/api/v1/datasets/:owner/:name/rows', access.require('table.read', dataset), (c) => {
    const count = countParameter(c.req.query('n'), 3)
    return access.sendData(c, { body: bodies.rows(count), records: count })
  })
  app.get('/api/v1/datasets/:owner/:name/blob', access.require('table.read', dataset), (c) => {
    const bytes = countParameter(c.req.query('bytes'), 10)
    return access.sendData(c, { body: bodies.blob(bytes), records: 1, contentType: 'text/plain' })
  })
  app.get('/api/v1/datasets/:owner/:name/stream', access.require('table.read', dataset), (c) => {
    const chunks = streamChunks(
      countParameter(c.req.query('chunks'), 3),
      countParameter(c.req.query('size'), 10),
      c.req.query('uncounted') !== undefined,
    )
    return access.streamData(c, chunks, { contentType: 'text/plain' })
  })
  app.post('/api/v1/datasets/:owner/:name/exports', access.require('export.create', dataset), (c) =>
    access.sendData(c, { body: bodies.exportCsv, records: 2, contentType: 'text/csv' }),
  )
  app.get('/api/v1/users/:user/datasets', access.authenticate, (c) =>
    json(c, bodies.listing(c.req.param('user'), c.get('principal'))),
  )
  app.notFound((c) => access.sendDenial(c, deny('not_found')))

  // Without a `createServer` option, serve() starts a node:http server.
  return listening(serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }) as Server)
}
