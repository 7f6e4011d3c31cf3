import { describe, expect, test } from 'vitest'
import { DENY_STATUS } from '../../src/decisions/decision.js'
import { minimalScopes } from '../../src/decisions/minimal-scopes.js'
import { OPERATION_NAMES, OPERATIONS, type Operation } from '../../src/decisions/operations.js'
import { SCOPES } from '../../src/decisions/scopes.js'
import { InvalidArgumentError } from '../../src/errors.js'
import {
  describeRoutes,
  minimalScopeOf,
  type OpenApiOptions,
  operationSecurity,
  type RouteDescription,
  securitySchemes,
  withOperationSecurity,
} from '../../src/openapi/index.js'
import { expectValidDocument, minimalScopesFromTables } from './validate.js'

const ISSUER = 'https://auth.example.org'

const ROUTES: RouteDescription[] = [
  { method: 'GET', path: '/api/v1/organizations/:org/datasets', operation: 'authenticated' },
  ...OPERATION_NAMES.map((operation, index) => ({
    method: index % 2 === 0 ? 'GET' : 'POST',
    path: `/api/v1/${operation.replace('.', '/')}/:owner/:name`,
    operation,
  })),
  { method: 'POST', path: '/oauth/token', operation: 'public' },
]

function documentFor(options: OpenApiOptions, version: string) {
  return {
    openapi: version,
    info: { title: 'Data API', version: '1' },
    components: { securitySchemes: securitySchemes(options) },
    paths: describeRoutes(ROUTES, options),
  }
}

describe('operationSecurity walks the catalogue with the decision tables', () => {
  const tables = minimalScopesFromTables()

  test('the tables name a minimal scope for every operation', () => {
    expect([...tables.keys()].sort()).toEqual([...OPERATION_NAMES].sort())
  })

  test.each(OPERATION_NAMES)('%s declares the scope the decision tables say is minimal', (operation) => {
    const scope = tables.get(operation)!
    const { security, 'x-data-access': access } = operationSecurity(operation, { issuer: ISSUER })
    expect(security).toEqual([{ bearer: [scope] }, { oauth2: [scope] }])
    expect(access.scope).toBe(scope)
  })

  test.each(OPERATION_NAMES)('%s: minimalScopeOf is its minimalScopes alone, public aside', (operation) => {
    const granted = minimalScopes([operation]).granted
    expect(minimalScopeOf(operation)).toBe(granted[granted.length - 1])
    expect(minimalScopeOf(operation)).toBe(tables.get(operation))
  })

  test.each(OPERATION_NAMES)('%s: x-data-access says what the catalogue says', (operation) => {
    const spec = OPERATIONS[operation]
    const access = operationSecurity(operation)['x-data-access']
    expect(access).toMatchObject({
      operation,
      requirement: operation,
      resource: spec.need.kind,
      dataContent: spec.dataContent,
      exportRestricted: spec.dataContent,
    })
    expect(access.level).toBe('level' in spec.need ? spec.need.level : 'admin')
    expect(access.denials.includes('export_restricted')).toBe(spec.dataContent)
  })

  test.each(OPERATION_NAMES)(
    '%s: every denial is documented under its status, with its code',
    (operation) => {
      const { responses, 'x-data-access': access } = operationSecurity(operation)
      for (const code of access.denials) {
        const response = responses[String(DENY_STATUS[code])]!
        const body = response.content!['application/json']!.schema
        expect(body.properties!.error!.properties!.code!.enum).toContain(code)
      }
      expect(Object.keys(responses)).toEqual(['400', '401', '403', '404', '503'])
    },
  )

  test('a scope denial carries the challenge; a 401 always does', () => {
    const { responses } = operationSecurity('table.read')
    expect(responses['401']!.headers!['WWW-Authenticate']!.required).toBe(true)
    expect(responses['403']!.headers!['WWW-Authenticate']!.required).toBeUndefined()
    expect(responses['404']!.headers).toBeUndefined()
  })
})

describe('authenticated, public and anonymous routes say so', () => {
  test.each(['authenticated', 'public'] as const)(
    '%s: x-data-access names no operation, its requirement says what is checked',
    (requirement) => {
      const access = operationSecurity(requirement)['x-data-access']
      expect(access.requirement).toBe(requirement)
      expect(Object.keys(access)).not.toContain('operation')
    },
  )

  test('authenticated: any token, scope public, no resource denials', () => {
    const { security, responses, 'x-data-access': access } = operationSecurity('authenticated')
    expect(security).toEqual([{ bearer: ['public'] }])
    expect(Object.keys(responses)).toEqual(['400', '401', '403', '503'])
    expect(access).toEqual({
      requirement: 'authenticated',
      scope: 'public',
      dataContent: false,
      exportRestricted: false,
      denials: ['invalid_request', 'missing_token', 'invalid_token', 'https_required', 'service_unavailable'],
    })
  })

  test('public: no security, no denials', () => {
    expect(operationSecurity('public', { issuer: ISSUER })).toEqual({
      security: [],
      responses: {},
      'x-data-access': { requirement: 'public', dataContent: false, exportRestricted: false, denials: [] },
    })
  })

  test('anonymous: no credentials is an alternative, and never a 401 missing_token', () => {
    const { security, 'x-data-access': access } = operationSecurity('dataset.metadata', { anonymous: true })
    expect(security).toEqual([{ bearer: ['data.metadata'] }, {}])
    expect(access.denials).not.toContain('missing_token')
  })

  test('OpenAPI 3.0: a bearer requirement lists no scopes, OAuth does', () => {
    expect(operationSecurity('table.read', { openapi: '3.0', issuer: ISSUER }).security).toEqual([
      { bearer: [] },
      { oauth2: ['data.data'] },
    ])
  })
})

describe('securitySchemes', () => {
  test('bearer only without an issuer', () => {
    expect(Object.keys(securitySchemes())).toEqual(['bearer'])
    expect(securitySchemes().bearer).toMatchObject({ type: 'http', scheme: 'bearer' })
  })

  test('with an issuer: the authorization-code flow, PKCE, every scope described', () => {
    const oauth2 = securitySchemes({ issuer: `${ISSUER}/` }).oauth2!
    if (oauth2.type !== 'oauth2') throw new Error('not oauth2')
    const flow = oauth2.flows.authorizationCode
    expect(flow.authorizationUrl).toBe(`${ISSUER}/oauth/authorize`)
    expect(flow.tokenUrl).toBe(`${ISSUER}/oauth/token`)
    expect(flow['x-usePkce']).toBe('SHA-256')
    expect(Object.keys(flow.scopes)).toEqual([...SCOPES])
    expect(flow.scopes['data.metadata']).toMatch(
      /^Metadata access .*dataset\.list, dataset\.overview, dataset\.metadata\.$/,
    )
    expect(oauth2.description).toContain('S256')
  })

  test.each([
    ['3.1', 'x-deviceAuthorization'],
    ['3.2', 'deviceAuthorization'],
  ] as const)('OpenAPI %s: the device flow is %s', (openapi, key) => {
    const oauth2 = securitySchemes({ issuer: ISSUER, openapi }).oauth2!
    if (oauth2.type !== 'oauth2') throw new Error('not oauth2')
    expect(Object.keys(oauth2.flows)).toEqual(['authorizationCode', key])
    expect(oauth2.flows[key]!.deviceAuthorizationUrl).toBe(`${ISSUER}/oauth/device_authorization`)
  })

  test.each([
    [{ issuer: 'auth.example.org' }, /^options\.issuer: expected an absolute http\(s\) URL/],
    [{ issuer: 'ftp://auth.example.org' }, /^options\.issuer/],
    [{ issuer: 'https://auth.example.org/?x=1' }, /^options\.issuer/],
    [{ openapi: '3.3' }, /^options\.openapi: expected one of 3\.0, 3\.1, 3\.2, got "3\.3"/],
    [{ anonymous: 'yes' }, /^options\.anonymous: expected a boolean/],
    [{ issuer: 42 }, /^options\.issuer: expected an absolute http\(s\) URL, got 42/],
  ])('rejects %j', (options, message) => {
    expect(() => securitySchemes(options as OpenApiOptions)).toThrow(InvalidArgumentError)
    expect(() => securitySchemes(options as OpenApiOptions)).toThrow(message)
  })
})

describe('describeRoutes', () => {
  test.each([
    [{}, '3.1.0'],
    [{ issuer: ISSUER }, '3.1.0'],
    [{ issuer: ISSUER, anonymous: true }, '3.1.0'],
    [{ issuer: ISSUER, openapi: '3.0' }, '3.0.3'],
  ] as [OpenApiOptions, string][])(
    'with %j, a document validates as OpenAPI %s',
    async (options, version) => {
      await expectValidDocument(documentFor(options, version))
    },
  )

  test('turns path parameters into OpenAPI ones, with a summary naming the scope', () => {
    const paths = describeRoutes([
      { method: 'get', path: '/datasets/:owner/{name}/metadata', operation: 'dataset.metadata' },
    ])
    const operation = paths['/datasets/{owner}/{name}/metadata']!.get!
    expect(operation.summary).toBe('dataset.metadata (scope data.metadata)')
    expect(operation.parameters!.map((parameter) => parameter.name)).toEqual(['owner', 'name'])
    expect(operation.responses['200']).toEqual({ description: 'Success.' })
  })

  test("a route's own responses, summary and tags win", () => {
    const paths = describeRoutes([
      {
        method: 'GET',
        path: '/d',
        operation: 'table.read',
        summary: 'Rows',
        tags: ['tables'],
        responses: { '200': { description: 'Rows' }, '404': { description: 'No such table' } },
      },
    ])
    const operation = paths['/d']!.get!
    expect(operation).toMatchObject({ summary: 'Rows', tags: ['tables'] })
    expect(operation.responses['404']).toEqual({ description: 'No such table' })
    expect(operation.responses['401']).toBeDefined()
  })

  test.each([
    [
      [{ method: 'FETCH', path: '/d', operation: 'table.read' }],
      /^routes\[0\]\.method: expected one of get, /,
    ],
    [
      [{ method: 'GET', path: 'd', operation: 'table.read' }],
      /^routes\[0\]\.path: expected a path starting with \//,
    ],
    [
      [{ method: 'GET', path: '/d', operation: 'table.write' }],
      /^routes\[0\]\.operation: unknown operation "table\.write"/,
    ],
    [
      [
        { method: 'GET', path: '/d/:x', operation: 'table.read' },
        { method: 'get', path: '/d/{x}', operation: 'table.read' },
      ],
      /^routes\[1\]: GET \/d\/\{x\} is described twice/,
    ],
  ])('rejects %j', (routes, message) => {
    expect(() => describeRoutes(routes as RouteDescription[])).toThrow(InvalidArgumentError)
    expect(() => describeRoutes(routes as RouteDescription[])).toThrow(message)
  })

  test.each([
    [undefined, /^routes: expected an array of routes/],
    [[null], /^routes\[0\]\.method: expected one of/],
    [
      [{ method: 'GET', path: 7, operation: 'public' }],
      /^routes\[0\]\.path: expected a path starting with \/, got 7/,
    ],
  ])('rejects routes %j', (routes, message) => {
    expect(() => describeRoutes(routes as unknown as RouteDescription[])).toThrow(message)
  })

  test('operationSecurity names an unknown operation', () => {
    expect(() => operationSecurity('table.write' as Operation)).toThrow(/unknown operation "table\.write"/)
  })

  test.each(['table.write', 'authenticated', 'public', undefined])(
    'minimalScopeOf refuses %j',
    (operation) => {
      expect(() => minimalScopeOf(operation as Operation)).toThrow(InvalidArgumentError)
      expect(() => minimalScopeOf(operation as Operation)).toThrow(/unknown operation/)
    },
  )
})

describe('withOperationSecurity', () => {
  test("adds the policy's fields; the host's own win where both set one", () => {
    const merged = withOperationSecurity('dataset.metadata', {
      method: 'get' as const,
      path: '/d',
      responses: { 200: { description: 'Metadata' }, 404: { description: 'No such dataset' } },
    })
    expect(merged.method).toBe('get')
    expect(merged.security).toEqual([{ bearer: ['data.metadata'] }])
    expect(merged.responses['404']).toEqual({ description: 'No such dataset' })
    expect(merged.responses['401']!.description).toMatch(/^Invalid credentials/)
    expect(merged['x-data-access'].requirement).toBe('dataset.metadata')
    expect(withOperationSecurity('table.read', { security: [] }).security).toEqual([])
  })
})
