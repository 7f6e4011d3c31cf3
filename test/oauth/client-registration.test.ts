import { describe, expect, it } from 'vitest'
import {
  generateRegisteredClientId,
  isRegisteredClientId,
  REGISTERED_CLIENT_ID_PREFIX,
  registeredClient,
  registrationResponse,
  validateClientRegistration,
} from '../../src/oauth/client-registration.js'

const VALID = { redirect_uris: ['http://127.0.0.1/callback'] }

describe('validateClientRegistration', () => {
  it.each<[string, Record<string, unknown>]>([
    ['the minimum', VALID],
    ['none', { ...VALID, token_endpoint_auth_method: 'none' }],
    ['[::1] on a port', { redirect_uris: ['http://[::1]:8080/cb'] }],
    ['https', { redirect_uris: ['https://app.example.com/cb'] }],
    ['authorization_code', { ...VALID, grant_types: ['authorization_code'] }],
    ['and refresh_token', { ...VALID, grant_types: ['authorization_code', 'refresh_token'] }],
    ['code', { ...VALID, response_types: ['code'] }],
    ['a scope', { ...VALID, scope: 'public data.overview' }],
    [
      'what the MCP SDK sends',
      {
        redirect_uris: ['http://127.0.0.1:8123/callback'],
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        client_name: 'MCP client',
        client_uri: 'https://example.com',
        software_id: 'x',
      },
    ],
  ])('accepts %s', (_, body) => {
    expect(validateClientRegistration(body).ok).toBe(true)
  })

  it.each<[string, unknown, 'invalid_redirect_uri' | 'invalid_client_metadata', string]>([
    ['no object', [], 'invalid_client_metadata', 'JSON object'],
    ['null', null, 'invalid_client_metadata', 'JSON object'],
    ['no redirect_uris', {}, 'invalid_redirect_uri', 'non-empty array'],
    ['empty redirect_uris', { redirect_uris: [] }, 'invalid_redirect_uri', 'non-empty array'],
    ['a string', { redirect_uris: 'http://127.0.0.1/cb' }, 'invalid_redirect_uri', 'non-empty array'],
    ['too many', { redirect_uris: Array(21).fill('http://127.0.0.1/cb') }, 'invalid_redirect_uri', 'at most'],
    ['localhost', { redirect_uris: ['http://localhost:8080/cb'] }, 'invalid_redirect_uri', 'localhost'],
    [
      'plain http',
      { redirect_uris: ['http://app.example.com/cb'] },
      'invalid_redirect_uri',
      'app.example.com',
    ],
    ['a fragment', { redirect_uris: ['https://app.example.com/cb#x'] }, 'invalid_redirect_uri', 'fragment'],
    ['a custom scheme', { redirect_uris: ['myapp://cb'] }, 'invalid_redirect_uri', 'myapp'],
    ['a number', { redirect_uris: [3] }, 'invalid_redirect_uri', '3'],
    [
      'client_secret_basic',
      { ...VALID, token_endpoint_auth_method: 'client_secret_basic' },
      'invalid_client_metadata',
      'token_endpoint_auth_method',
    ],
    [
      'client_secret_post',
      { ...VALID, token_endpoint_auth_method: 'client_secret_post' },
      'invalid_client_metadata',
      'token_endpoint_auth_method',
    ],
    [
      'private_key_jwt',
      { ...VALID, token_endpoint_auth_method: 'private_key_jwt' },
      'invalid_client_metadata',
      'token_endpoint_auth_method',
    ],
    ['implicit', { ...VALID, grant_types: ['implicit'] }, 'invalid_client_metadata', 'grant_types'],
    [
      'client_credentials',
      { ...VALID, grant_types: ['client_credentials'] },
      'invalid_client_metadata',
      'grant_types',
    ],
    [
      'the device grant',
      { ...VALID, grant_types: ['authorization_code', 'urn:ietf:params:oauth:grant-type:device_code'] },
      'invalid_client_metadata',
      'grant_types',
    ],
    [
      'grant_types not a list',
      { ...VALID, grant_types: 'authorization_code' },
      'invalid_client_metadata',
      'grant_types',
    ],
    ['token', { ...VALID, response_types: ['token'] }, 'invalid_client_metadata', 'response_types'],
    [
      'response_types not a list',
      { ...VALID, response_types: 'code' },
      'invalid_client_metadata',
      'response_types',
    ],
    ['an unknown scope', { ...VALID, scope: 'public admin' }, 'invalid_client_metadata', 'admin'],
    ['a scope list', { ...VALID, scope: ['public'] }, 'invalid_client_metadata', 'scope'],
    ['a long scope', { ...VALID, scope: 'public '.repeat(200) }, 'invalid_client_metadata', 'scope'],
    ['a long name', { ...VALID, client_name: 'n'.repeat(101) }, 'invalid_client_metadata', 'client_name'],
    [
      'a name with markup controls',
      { ...VALID, client_name: 'a\u0000b' },
      'invalid_client_metadata',
      'client_name',
    ],
    ['a name that is a number', { ...VALID, client_name: 5 }, 'invalid_client_metadata', 'client_name'],
    [
      'a name with a right-to-left override',
      { ...VALID, client_name: 'Evil\u202eelgoog' },
      'invalid_client_metadata',
      'client_name',
    ],
    [
      'a name with a zero width space',
      { ...VALID, client_name: 'Git\u200bHub' },
      'invalid_client_metadata',
      'client_name',
    ],
  ])('refuses %s', (_, body, error, detail) => {
    const check = validateClientRegistration(body)
    expect(check.ok).toBe(false)
    if (!check.ok) {
      expect(check.error.error).toBe(error)
      expect(check.error.status).toBe(400)
      expect(check.error.error_description).toContain(detail)
    }
  })

  it('keeps the name and scope, empty ones as none', () => {
    const check = validateClientRegistration({ ...VALID, client_name: 'CLI', scope: 'public' })
    expect(check).toEqual({
      ok: true,
      registration: { redirectUris: VALID.redirect_uris, name: 'CLI', scope: 'public' },
    })
    const empty = validateClientRegistration({ ...VALID, client_name: '', scope: '' })
    expect(empty).toEqual({
      ok: true,
      registration: { redirectUris: VALID.redirect_uris, name: undefined, scope: undefined },
    })
  })
})

describe('registered client ids', () => {
  it('are random, prefixed, and recognised', () => {
    const ids = new Set(Array.from({ length: 100 }, generateRegisteredClientId))
    expect(ids.size).toBe(100)
    for (const id of ids) {
      expect(id.startsWith(REGISTERED_CLIENT_ID_PREFIX)).toBe(true)
      expect(isRegisteredClientId(id)).toBe(true)
    }
  })

  it.each([
    'cli',
    'dyn_',
    'dyn_short',
    `dyn_${'a'.repeat(33)}`,
    `DYN_${'a'.repeat(32)}`,
    `dyn_${'-'.repeat(32)}`,
  ])('%s is not one', (id) => {
    expect(isRegisteredClientId(id)).toBe(false)
  })
})

describe('registrationResponse and registeredClient', () => {
  it('echo the metadata, no secret, no refresh_token grant, no offline access', () => {
    const registration = { redirectUris: ['http://127.0.0.1/cb'], name: 'CLI', scope: 'public' }
    expect(registrationResponse('dyn_x', 1_700_000_000, registration)).toEqual({
      client_id: 'dyn_x',
      client_id_issued_at: 1_700_000_000,
      redirect_uris: ['http://127.0.0.1/cb'],
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code'],
      response_types: ['code'],
      client_name: 'CLI',
      scope: 'public',
    })
    expect(registeredClient('dyn_x', registration)).toEqual({
      id: 'dyn_x',
      redirectUris: ['http://127.0.0.1/cb'],
      offline: false,
      name: 'CLI',
    })
    const bare = { redirectUris: ['http://127.0.0.1/cb'], name: undefined, scope: undefined }
    expect(registrationResponse('dyn_x', 1, bare)).not.toHaveProperty('client_name')
    expect(registrationResponse('dyn_x', 1, bare)).not.toHaveProperty('scope')
    expect(registeredClient('dyn_x', bare)).not.toHaveProperty('name')
  })
})
