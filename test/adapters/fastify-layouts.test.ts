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

async function answer(
  app: FastifyInstance,
  url: string,
  token?: string,
  extra: { method?: 'GET' | 'HEAD'; headers?: Record<string, string> } = {},
) {
  const response = await app.inject({
    method: extra.method ?? 'GET',
    url,
    headers: { ...extra.headers, ...(token === undefined ? {} : { authorization: `Bearer ${token}` }) },
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

  // Issue 27, finding 2: a route is told apart by everything that selects it, not by method and URL.
  test.each([
    ['a host constraint', { host: 'other.example' }, { host: 'other.example' }],
    ['a version constraint', { version: '2.0.0' }, { 'accept-version': '2.0.0' }],
  ] as const)(
    'a sibling route that differs from a covered one only by %s is refused, HEAD too',
    async (_name, constraints, headers) => {
      const { app, fixture } = await layout((app, fixture) => {
        app.register(async (api) => {
          await api.register(accessControl, { policy: fixture.policy })
          api.get('/api/x', { config: { access: ACCESS(fixture) } }, async () => 'guarded')
        })
        app.register(async (other) => {
          other.get(
            '/api/x',
            { constraints, config: { access: ACCESS(fixture) } },
            async () => 'served unguarded',
          )
        })
      })
      for (const method of ['GET', 'HEAD'] as const) {
        // The covered route, and its automatic HEAD.
        expect(await answer(app, '/api/x', undefined, { method })).toBe(401)
        expect(await answer(app, '/api/x', fixture.tokens.bob, { method })).toBe(200)
        expect(await answer(app, '/api/x', undefined, { method, headers })).toBe(503)
        expect(await answer(app, '/api/x', fixture.tokens.bob, { method, headers })).toBe(503)
      }
      await app.close()
    },
  )

  test('sibling plugin instances each guard their own routes, with their own policy', async () => {
    const other = await createFixture()
    const { app, fixture } = await layout((app, fixture) => {
      app.register(async (first) => {
        await first.register(accessControl, { policy: fixture.policy })
        first.get('/first', { config: { access: ACCESS(fixture) } }, async () => 'first')
      })
      app.register(async (second) => {
        await second.register(accessControl, { policy: other.policy })
        second.get('/second', { config: { access: {} } }, async () => 'second')
        // The first scope's URL, told apart by its host.
        const byHost = { constraints: { host: 'second.example' }, config: { access: {} } }
        second.get('/first', byHost, async () => 'second')
      })
    })
    const secondHost = { headers: { host: 'second.example' } }
    expect(await answer(app, '/first', fixture.tokens.bob)).toBe(200)
    expect(await answer(app, '/first')).toBe(401)
    expect(await answer(app, '/second', other.tokens.bob)).toBe(200)
    expect(await answer(app, '/second')).toBe(401)
    expect(await answer(app, '/first', other.tokens.bob, secondHost)).toBe(200)
    // Each policy knows its own tokens only.
    expect(await answer(app, '/second', fixture.tokens.bob)).toBe(401)
    expect(await answer(app, '/first', fixture.tokens.bob, secondHost)).toBe(401)
    expect(await answer(app, '/first', other.tokens.bob)).toBe(401)
    await app.close()
  })

  test("an instance inside another instance's scope is refused at startup with a ConfigError naming the fix", async () => {
    const fixture = await createFixture()
    const app = Fastify()
    await app.register(accessControl, { policy: fixture.policy })
    app.register(async (child) => {
      await child.register(accessControl, { policy: fixture.policy })
    })
    const refused = await app.ready().then(
      () => undefined,
      (error: unknown) => error,
    )
    expect(refused).toBeInstanceOf(ConfigError)
    expect((refused as ConfigError).message).toMatch(
      /^accessControl: is registered inside the scope of another accessControl instance; register each instance in a scope of its own/,
    )
    await app.close().catch(() => {})
  })
})
