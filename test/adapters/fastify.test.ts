import { type FastifyInstance, type FastifyReply, type FastifyRequest, fastify } from 'fastify'
import { afterAll, beforeAll, describe, expect, expectTypeOf, test } from 'vitest'
import { accessControl } from '../../adapters/fastify/index.js'
import { type Allow, createAccessPolicy, type Principal } from '../../src/index.js'
import { MemoryTokenStore } from '../../src/tokens/memory-token-store.js'
import { endlessChunks, hangUpAfterFirstBytes, storeWithToken } from './listen.js'

let app: FastifyInstance
let port: number
let token: string
const stream = endlessChunks()
const open = () => ({ kind: 'dataset', publicLevel: 'data' }) as const

beforeAll(async () => {
  const tokens = await storeWithToken()
  token = tokens.token
  app = fastify()
  await app.register(accessControl, { policy: createAccessPolicy({ tokens: tokens.store }) })
  app.get('/health', async () => 'ok')
  app.post('/listing', { config: { access: {} } }, async (request) => ({ caller: request.principal?.userId }))
  app.get(
    '/sync-throw',
    {
      config: {
        access: {
          operation: 'dataset.overview',
          resource: () => {
            throw new Error('boom')
          },
        },
      },
    },
    async () => 'unreachable',
  )
  app.get('/unguarded-data', { config: { access: {} } }, async (_request, reply) =>
    reply.sendData({ body: 'secret rows', records: 1 }),
  )
  app.get(
    '/endless',
    { config: { access: { operation: 'table.read', resource: open } } },
    async (_request, reply) => reply.streamData(stream.chunks),
  )
  await app.listen({ port: 0, host: '127.0.0.1' })
  port = (app.server.address() as { port: number }).port
})

afterAll(() => app.close())

const url = (path: string) => `http://127.0.0.1:${port}${path}`
const auth = () => ({ authorization: `Bearer ${token}` })

describe('Fastify adapter', () => {
  test('routes without config.access are left alone', async () => {
    const response = await fetch(url('/health'))
    expect(await response.text()).toBe('ok')
  })

  test('an authenticate-only route still refuses an access_token in the parsed body', async () => {
    const response = await fetch(url('/listing'), {
      method: 'POST',
      headers: { ...auth(), 'content-type': 'application/json' },
      body: JSON.stringify({ access_token: token }),
    })
    expect(response.status).toBe(400)
    expect(await response.text()).not.toContain(token)
  })

  test('an authenticate-only route sets the principal', async () => {
    const response = await fetch(url('/listing'), { method: 'POST', headers: auth() })
    expect(await response.json()).toEqual({ caller: 'alice' })
  })

  test('a resolver that throws synchronously is 503', async () => {
    expect((await fetch(url('/sync-throw'), { headers: auth() })).status).toBe(503)
  })

  test('sendData on a route no guard allowed is a host error, never data', async () => {
    const response = await fetch(url('/unguarded-data'), { headers: auth() })
    expect(response.status).toBe(500)
    expect(await response.text()).not.toContain('secret rows')
  })

  test('a client that hangs up stops the host iterator', async () => {
    expect(await hangUpAfterFirstBytes(port, '/endless', auth())).toBe(200)
    await stream.closed
  })

  test.each([
    [
      'an unknown operation',
      { operation: 'table.write', resource: open },
      /GET \/x: unknown operation "table\.write"/,
    ],
    [
      'an operation without a resolver',
      { operation: 'table.read' },
      /GET \/x: operation table\.read needs a resource/,
    ],
    ['a resolver without an operation', { resource: open }, /GET \/x: unknown operation undefined/],
  ])('rejects %s when the route is declared', async (_name, access, message) => {
    const instance = fastify()
    await instance.register(accessControl, { policy: createAccessPolicy({ tokens: new MemoryTokenStore() }) })
    const declare = async () => {
      instance.get('/x', { config: { access: access as never } }, async () => 'x')
      await instance.ready()
    }
    await expect(declare()).rejects.toThrow(message)
    await instance.close()
  })

  test('routes declared before the plugin are still guarded, and half-declared ones fail closed', async () => {
    const tokens = await storeWithToken()
    const instance = fastify()
    const early = (access: object) => ({ config: { access: access as never } })
    instance.get('/early', early({ operation: 'dataset.overview', resource: open }), async () => 'early data')
    instance.get('/no-resolver', early({ operation: 'dataset.overview' }), async () => 'leaked data')
    instance.get('/no-operation', early({ resource: open }), async () => 'leaked data')
    await instance.register(accessControl, { policy: createAccessPolicy({ tokens: tokens.store }) })
    const get = (url: string, authorization?: string) =>
      instance.inject({ url, headers: authorization === undefined ? {} : { authorization } })
    expect((await get('/early')).statusCode).toBe(401)
    expect((await get('/early', `Bearer ${tokens.token}`)).body).toBe('early data')
    expect((await get('/no-resolver', `Bearer ${tokens.token}`)).statusCode).toBe(503)
    expect((await get('/no-operation', `Bearer ${tokens.token}`)).statusCode).toBe(403)
    await instance.close()
  })

  test('decorators are typed', () => {
    expectTypeOf<FastifyRequest['principal']>().toEqualTypeOf<Principal | undefined>()
    expectTypeOf<FastifyRequest['accessDecision']>().toEqualTypeOf<Allow | undefined>()
    expectTypeOf<ReturnType<FastifyReply['sendData']>>().toEqualTypeOf<FastifyReply>()
  })
})
