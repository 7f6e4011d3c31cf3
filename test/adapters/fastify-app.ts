import type { AddressInfo } from 'node:net'
import { type FastifyRequest, fastify } from 'fastify'
import { accessControl } from '../../adapters/fastify/index.js'
import { deny } from '../../src/index.js'
import { bodies, countParameter, type Fixture, streamChunks } from './fixture.js'
import type { RunningApp } from './running-app.js'

type DatasetParams = { owner?: string; name?: string; user?: string }
type CountQuery = Record<string, string | undefined>

/**
 * The adapters' test app on Fastify 5, with the default router options.
 *
 * @example
 * const app = await startFastifyApp(fixture, '127.0.0.1')
 */
export async function startFastifyApp(fixture: Fixture, trustProxy: string | false): Promise<RunningApp> {
  const app = fastify({ trustProxy })
  // Fastify parses JSON only; forms are registered the way @fastify/formbody would.
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(String(body))))
  })
  await app.register(accessControl, { policy: fixture.policy })
  const params = (request: FastifyRequest) => request.params as DatasetParams
  const query = (request: FastifyRequest) => request.query as CountQuery
  const dataset = (request: FastifyRequest) =>
    fixture.describe(params(request).owner, params(request).name, request.principal)

  app.get(
    '/api/v1/datasets/:owner/:name',
    { config: { access: { operation: 'dataset.overview', resource: dataset } } },
    async (request, reply) =>
      reply.type('application/json').send(bodies.overview(params(request).owner, params(request).name)),
  )
  app.get(
    '/api/v1/datasets/:owner/:name/metadata',
    { config: { access: { operation: 'dataset.metadata', resource: dataset } } },
    async (request, reply) =>
      reply.type('application/json').send(bodies.metadata(params(request).owner, params(request).name)),
  )
  app.get(
    '/api/v1/datasets/:owner/:name/rows',
    { config: { access: { operation: 'table.read', resource: dataset } } },
    async (request, reply) => {
      const count = countParameter(query(request).n, 3)
      return reply.sendData({ body: bodies.rows(count), records: count })
    },
  )
  app.get(
    '/api/v1/datasets/:owner/:name/blob',
    { config: { access: { operation: 'table.read', resource: dataset } } },
    async (request, reply) => {
      const bytes = countParameter(query(request).bytes, 10)
      return reply.sendData({ body: bodies.blob(bytes), records: 1, contentType: 'text/plain' })
    },
  )
  app.get(
    '/api/v1/datasets/:owner/:name/stream',
    { config: { access: { operation: 'table.read', resource: dataset } } },
    async (request, reply) => {
      const chunks = streamChunks(
        countParameter(query(request).chunks, 3),
        countParameter(query(request).size, 10),
        query(request).uncounted !== undefined,
      )
      return reply.streamData(chunks, { contentType: 'text/plain' })
    },
  )
  app.post(
    '/api/v1/datasets/:owner/:name/exports',
    { config: { access: { operation: 'export.create', resource: dataset } } },
    async (_request, reply) =>
      reply.sendData({ body: bodies.exportCsv, records: 2, contentType: 'text/csv' }),
  )
  app.get('/api/v1/users/:user/datasets', { config: { access: {} } }, async (request, reply) =>
    reply.type('application/json').send(bodies.listing(params(request).user, request.principal)),
  )
  app.setNotFoundHandler((_request, reply) => reply.sendDenial(deny('not_found')))

  await app.listen({ port: 0, host: '127.0.0.1' })
  return { port: (app.server.address() as AddressInfo).port, close: () => app.close() }
}
