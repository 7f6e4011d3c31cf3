import { createRequire } from 'node:module'
import type { Request } from 'express'
import { accessControl } from '../../adapters/express/index.js'
import { deny } from '../../src/index.js'
import { bodies, countParameter, type Fixture, streamChunks } from './fixture.js'
import { listening } from './listen.js'
import type { RunningApp } from './running-app.js'

// express ships CommonJS with `export =` typings; the package's tsconfig has no esModuleInterop.
const express = createRequire(import.meta.url)('express') as typeof import('express')

/**
 * The adapters' test app on Express 5, with the routing defaults left as they are
 * (case-insensitive, non-strict) so that the table also covers them.
 *
 * @example
 * const app = await startExpressApp(fixture, '127.0.0.1')
 */
export async function startExpressApp(fixture: Fixture, trustProxy: string | false): Promise<RunningApp> {
  const app = express()
  app.set('trust proxy', trustProxy)
  app.use(express.json(), express.urlencoded({ extended: false }))
  const access = accessControl({ policy: fixture.policy })
  const dataset = (req: Request<{ owner: string; name: string }>) =>
    fixture.describe(req.params.owner, req.params.name, req.principal)

  app.get('/api/v1/datasets/:owner/:name', access.require('dataset.overview', dataset), (req, res) => {
    res.type('application/json').send(bodies.overview(req.params.owner, req.params.name))
  })
  app.get(
    '/api/v1/datasets/:owner/:name/metadata',
    access.require('dataset.metadata', dataset),
    (req, res) => {
      res.type('application/json').send(bodies.metadata(req.params.owner, req.params.name))
    },
  )
  app.get('/api/v1/datasets/:owner/:name/rows', access.require('table.read', dataset), (req, res) => {
    const count = countParameter(req.query.n, 3)
    access.sendData(req, res, { body: bodies.rows(count), records: count })
  })
  app.get('/api/v1/datasets/:owner/:name/blob', access.require('table.read', dataset), (req, res) => {
    const bytes = countParameter(req.query.bytes, 10)
    access.sendData(req, res, { body: bodies.blob(bytes), records: 1, contentType: 'text/plain' })
  })
  app.get('/api/v1/datasets/:owner/:name/stream', access.require('table.read', dataset), async (req, res) => {
    const chunks = streamChunks(
      countParameter(req.query.chunks, 3),
      countParameter(req.query.size, 10),
      req.query.uncounted !== undefined,
    )
    await access.streamData(req, res, chunks, { contentType: 'text/plain' })
  })
  app.post('/api/v1/datasets/:owner/:name/exports', access.require('export.create', dataset), (req, res) => {
    access.sendData(req, res, { body: bodies.exportCsv, records: 2, contentType: 'text/csv' })
  })
  app.get('/api/v1/users/:user/datasets', access.authenticate, (req, res) => {
    res.type('application/json').send(bodies.listing(String(req.params.user), req.principal))
  })
  app.use((_req, res) => access.sendDenial(res, deny('not_found')))

  return listening(app.listen(0, '127.0.0.1'))
}
