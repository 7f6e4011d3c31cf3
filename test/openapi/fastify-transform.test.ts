import { describe, expect, test } from 'vitest'
import { type OpenApiTransform, openApiTransform } from '../../adapters/fastify/index.js'
import { InvalidArgumentError } from '../../src/errors.js'
import { operationSecurity } from '../../src/openapi/index.js'

// The transform alone, as @fastify/swagger calls it; test/openapi/integrations.test.ts runs it
// inside the real generator.
const guarded = { config: { access: { operation: 'table.read' as const, resource: () => undefined } } }

describe('openApiTransform', () => {
  test('a route without config.access passes through untouched (an empty schema when it had none)', () => {
    expect(openApiTransform()({ url: '/health', route: { config: {} } })).toEqual({
      schema: {},
      url: '/health',
    })
  })

  test('adds the policy’s security, denials and x-data-access, and a default success', () => {
    const { schema } = openApiTransform()({ url: '/rows', route: guarded }) as unknown as {
      schema: Record<string, unknown> & { response: Record<string, Record<string, unknown>> }
    }
    const owned = operationSecurity('table.read')
    expect(schema.security).toEqual(owned.security)
    expect(schema['x-data-access']).toEqual(owned['x-data-access'])
    expect(Object.keys(schema.response)).toEqual(['200', '400', '401', '403', '404', '503'])
    // Headers in the form a Fastify response schema documents them: a JSON Schema with its description.
    expect(schema.response['401']!.headers).toEqual({
      'WWW-Authenticate': {
        type: 'string',
        description: owned.responses['401']!.headers!['WWW-Authenticate']!.description,
      },
    })
  })

  test('config.access: {} is any valid token', () => {
    const { schema } = openApiTransform()({ url: '/list', route: { config: { access: {} } } })
    expect((schema as { security: unknown }).security).toEqual([{ bearer: ['public'] }])
  })

  test("the host's transform runs first, and what it returns wins", () => {
    const host: OpenApiTransform = ({ url }) => ({
      url: `/v1${url}`,
      schema: { response: { 403: { description: 'Mine' } }, security: [{ bearer: ['data.edit'] }] } as never,
    })
    const result = openApiTransform({ transform: host })({ url: '/rows', route: guarded })
    const schema = result.schema as { response: Record<string, unknown>; security: unknown }
    expect(result.url).toBe('/v1/rows')
    expect(schema.security).toEqual([{ bearer: ['data.edit'] }])
    expect(schema.response['403']).toEqual({ description: 'Mine' })
    expect(schema.response['401']).toBeDefined()
    // The host described a response: no default success is added.
    expect(schema.response['200']).toBeUndefined()
  })

  test('a bad option fails when the transform is made', () => {
    expect(() => openApiTransform({ issuer: 'nope' })).toThrow(InvalidArgumentError)
  })
})
