import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify'
import { describe, expect, test } from 'vitest'
import { accessControl } from '../../adapters/fastify/index.js'
import { ConfigError, type ErrorContext } from '../../src/index.js'
import { createFixture, type Fixture } from './fixture.js'

// Issue 13: a route that declares `config.access` is never served unguarded, whatever plugin
// layout registered the adapter.
const ACCESS = (fixture: Fixture) => ({
  operation: 'dataset.metadata' as const,
  resource: (request: FastifyRequest) => fixture.describe('acme', 'members', request.principal),
})

async function answer(app: FastifyInstance, url: string, token?: string) {
  const response = await app.inject({
    url,
    headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
  })
  return response.statusCode
}

async function layout(build: (app: FastifyInstance, fixture: Fixture) => Promise<void> | void) {
  const errors: [unknown, ErrorContext][] = []
  const fixture = await createFixture({ onError: (error, context) => errors.push([error, context]) })
  const app = Fastify()
  await build(app, fixture)
  await app.ready()
  return { app, fixture, errors }
}

describe('Fastify plugin layouts', () => {
  test('root layout: every route with config.access is guarded', async () => {
    const { app, fixture } = await layout(async (app, fixture) => {
      await app.register(accessControl, { policy: fixture.policy })
      app.get('/x', { config: { access: ACCESS(fixture) } }, async () => 'served')
    })
    expect(await answer(app, '/x')).toBe(401)
    expect(await answer(app, '/x', fixture.tokens.carol)).toBe(404)
    expect(await answer(app, '/x', fixture.tokens.bob)).toBe(200)
    await app.close()
  })

  test('prefixed layout: the plugin inside an /api plugin guards the routes declared there', async () => {
    const { app, fixture } = await layout((app, fixture) => {
      app.register(
        async (api) => {
          await api.register(accessControl, { policy: fixture.policy })
          api.get('/x', { config: { access: ACCESS(fixture) } }, async () => 'served')
        },
        { prefix: '/api' },
      )
    })
    expect(await answer(app, '/api/x')).toBe(401)
    expect(await answer(app, '/api/x', fixture.tokens.bob)).toBe(200)
    await app.close()
  })

  test('child-plugin layout: a root route with config.access is refused, never served unguarded', async () => {
    const { app, fixture, errors } = await layout((app, fixture) => {
      app.register(async (child) => {
        await child.register(accessControl, { policy: fixture.policy })
        child.get('/inside', { config: { access: ACCESS(fixture) } }, async () => 'served')
      })
      app.get('/outside', { config: { access: ACCESS(fixture) } }, async () => 'served unguarded')
      app.get('/public', async () => 'public page')
    })
    expect(await answer(app, '/inside', fixture.tokens.bob)).toBe(200)
    expect(await answer(app, '/outside')).toBe(503)
    expect(await answer(app, '/outside', fixture.tokens.bob)).toBe(503)
    expect(await answer(app, '/public')).toBe(200)
    const [error, context] = errors.at(-1)!
    expect(context).toEqual({ stage: 'adapter' })
    expect(error).toBeInstanceOf(ConfigError)
    expect(String((error as Error).message)).toMatch(/GET \/outside .*register the plugin/)
    await app.close()
  })

  test('child-plugin layout: a route of a sibling plugin registered afterwards is refused too', async () => {
    const { app, fixture } = await layout((app, fixture) => {
      app.register(async (child) => {
        await child.register(accessControl, { policy: fixture.policy })
      })
      app.register(async (sibling) => {
        sibling.get('/sibling', { config: { access: ACCESS(fixture) } }, async () => 'served unguarded')
      })
    })
    expect(await answer(app, '/sibling', fixture.tokens.bob)).toBe(503)
    await app.close()
  })
})
