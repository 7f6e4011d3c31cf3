import { describe, expect, it } from 'vitest'
import type { OAuthParams } from '../../src/oauth/oauth-params.js'
import { isAllowedRedirectUri, isLoopbackRedirectUri } from '../../src/oauth/redirect-uri.js'
import { validateAuthorizationRequest } from '../../src/oauth/validate-authorization-request.js'
import { CLI, lookupClient, NATIVE, RFC_CHALLENGE, WEB } from './fixtures.js'

const base = {
  response_type: 'code',
  client_id: 'web',
  redirect_uri: 'https://web.example/cb',
  code_challenge: RFC_CHALLENGE,
  code_challenge_method: 'S256',
  scope: 'data.metadata',
  state: 'st-1',
}

function params(overrides: Record<string, string | readonly string[] | undefined>): OAuthParams {
  return { ...base, ...overrides }
}

describe('validateAuthorizationRequest: valid requests', () => {
  it('accepts a registered client and passes state through', async () => {
    const result = await validateAuthorizationRequest(base, lookupClient)
    expect(result).toEqual({
      ok: true,
      client: WEB,
      request: {
        clientId: 'web',
        redirectUri: 'https://web.example/cb',
        scopes: expect.anything(),
        state: 'st-1',
        codeChallenge: RFC_CHALLENGE,
      },
    })
    if (!result.ok) throw new Error('unreachable')
    expect(result.request.scopes.granted).toEqual(['public', 'data.metadata'])
  })

  it('reads public only when scope is absent or empty (RFC 6749 §3.1: empty is absent)', async () => {
    for (const scope of [undefined, '']) {
      const result = await validateAuthorizationRequest(params({ scope, state: undefined }), lookupClient)
      expect(result.ok && result.request.scopes.granted).toEqual(['public'])
      expect(result.ok && 'state' in result.request).toBe(false)
    }
  })

  it.each([
    ['127.0.0.1 on any port', 'http://127.0.0.1:50123/callback'],
    ['[::1] on any port', 'http://[::1]:8080/'],
    ['a loopback URI without a path', 'http://127.0.0.1:9'],
    ['a loopback URI with a query', 'http://127.0.0.1:65535/cb?x=%20y'],
    ['a loopback URI without a port', 'http://127.0.0.1/cb'],
  ])('accepts a session client (no client_id) redirecting to %s', async (_name, redirectUri) => {
    const result = await validateAuthorizationRequest(
      params({ client_id: undefined, redirect_uri: redirectUri }),
      lookupClient,
    )
    expect(result.ok).toBe(true)
    expect(result.ok && result.request).not.toHaveProperty('clientId')
    expect(result.ok && 'client' in result).toBe(false)
  })

  it.each([
    ['the registered URI itself', 'cli', 'http://127.0.0.1:8765/cb'],
    ['a registered loopback URI on another port (RFC 8252 §7.3)', 'cli', 'http://127.0.0.1:40000/cb'],
    ['a registered query URI, exactly', 'cli', 'https://app.example/cb?tenant=7'],
    ['a registered portless [::1] URI with a port', 'native', 'http://[::1]:5000/done'],
  ])('accepts %s', async (_name, clientId, redirectUri) => {
    const result = await validateAuthorizationRequest(
      params({ client_id: clientId, redirect_uri: redirectUri }),
      lookupClient,
    )
    expect(result.ok && result.request.redirectUri).toBe(redirectUri)
  })
})

// Design §7: an unknown client or redirect URI → a 400 page; never redirect to an unverified URI.
describe('validateAuthorizationRequest: errors shown as a 400 page', () => {
  it.each([
    ['an unknown client_id', { client_id: 'nobody' }, 'invalid_client'],
    ['a missing redirect_uri', { redirect_uri: undefined }, 'invalid_request'],
    ['an unregistered redirect_uri', { redirect_uri: 'https://evil.example/cb' }, 'invalid_request'],
    [
      'a redirect_uri differing by a trailing slash',
      { redirect_uri: 'https://web.example/cb/' },
      'invalid_request',
    ],
    ['a redirect_uri differing by case', { redirect_uri: 'https://WEB.example/cb' }, 'invalid_request'],
    ['a redirect_uri with an added query', { redirect_uri: 'https://web.example/cb?x=1' }, 'invalid_request'],
    ['a repeated client_id', { client_id: ['web', 'cli'] }, 'invalid_request'],
    [
      'a repeated redirect_uri',
      { redirect_uri: ['https://web.example/cb', 'https://web.example/cb'] },
      'invalid_request',
    ],
    ['a non-string client_id (JSON)', { client_id: 7 as unknown as string }, 'invalid_request'],
    // Errors that would otherwise be redirected are still a page when the client is unverified.
    [
      'an unknown client with a bad response_type',
      { client_id: 'nobody', response_type: 'token' },
      'invalid_client',
    ],
    [
      'a bad redirect_uri with a bad challenge',
      { redirect_uri: 'https://evil.example/', code_challenge: 'x' },
      'invalid_request',
    ],
  ])('%s', async (_name, overrides, error) => {
    const result = await validateAuthorizationRequest(params(overrides), lookupClient)
    expect(result).toEqual({
      ok: false,
      respond: 'page',
      error: expect.objectContaining({ error, status: 400 }),
    })
  })

  it.each([
    ['localhost (RFC 8252 §8.3)', 'http://localhost:8765/cb'],
    ['https', 'https://app.example/cb'],
    ['a private-use scheme', 'com.example.app:/cb'],
    ['another loopback address', 'http://127.0.0.2:8765/cb'],
    ['a port beyond 65535', 'http://127.0.0.1:65536/cb'],
    ['a port with a leading zero', 'http://127.0.0.1:08765/cb'],
    ['user info', 'http://user@127.0.0.1:8765/cb'],
    ['a host after the port', 'http://127.0.0.1:8765@evil.example/cb'],
    ['a fragment', 'http://127.0.0.1:8765/cb#x'],
    ['a backslash', 'http://127.0.0.1:8765\\@evil.example/cb'],
    ['a bad percent-encoding', 'http://127.0.0.1:8765/c%zz'],
  ])('refuses a session client redirecting to %s', async (_name, redirectUri) => {
    const result = await validateAuthorizationRequest(
      params({ client_id: undefined, redirect_uri: redirectUri }),
      lookupClient,
    )
    expect(result).toMatchObject({ ok: false, respond: 'page', error: { error: 'invalid_request' } })
  })

  it('answers server_error (503) as a page when the client registry fails', async () => {
    const result = await validateAuthorizationRequest(base, () => {
      throw new Error('registry down')
    })
    expect(result).toMatchObject({
      ok: false,
      respond: 'page',
      error: { error: 'server_error', status: 503 },
    })
  })

  it('treats a registry answer for another id as unknown', async () => {
    const result = await validateAuthorizationRequest(base, () => CLI)
    expect(result).toMatchObject({ ok: false, respond: 'page', error: { error: 'invalid_client' } })
  })
})

// RFC 6749 §4.1.2.1: once the client and redirect URI are verified, errors go back to the client.
describe('validateAuthorizationRequest: errors redirected with error and state', () => {
  it.each([
    ['a missing response_type', { response_type: undefined }, 'invalid_request'],
    ['response_type=token', { response_type: 'token' }, 'unsupported_response_type'],
    ['response_type=code id_token', { response_type: 'code id_token' }, 'unsupported_response_type'],
    ['a missing code_challenge', { code_challenge: undefined }, 'invalid_request'],
    ['a missing code_challenge_method', { code_challenge_method: undefined }, 'invalid_request'],
    ['code_challenge_method=plain', { code_challenge_method: 'plain' }, 'invalid_request'],
    ['code_challenge_method=s256 (lower case)', { code_challenge_method: 's256' }, 'invalid_request'],
    ['a malformed code_challenge', { code_challenge: `${RFC_CHALLENGE}=` }, 'invalid_request'],
    ['a plain-style challenge (a verifier)', { code_challenge: 'a'.repeat(64) }, 'invalid_request'],
    ['an unknown scope', { scope: 'workflow.read' }, 'invalid_scope'],
    ['a wrongly cased scope', { scope: 'Data.Metadata' }, 'invalid_scope'],
    ['a malformed scope string', { scope: 'data.metadata  public' }, 'invalid_scope'],
    ['a repeated scope parameter', { scope: ['public', 'data.data'] }, 'invalid_request'],
  ])('%s', async (_name, overrides, error) => {
    const result = await validateAuthorizationRequest(params(overrides), lookupClient)
    expect(result).toMatchObject({
      ok: false,
      respond: 'redirect',
      redirectUri: base.redirect_uri,
      error: { error },
    })
    if (result.ok || result.respond !== 'redirect') throw new Error('unreachable')
    const url = new URL(result.location)
    expect(`${url.origin}${url.pathname}`).toBe('https://web.example/cb')
    expect(url.searchParams.get('error')).toBe(error)
    expect(url.searchParams.get('state')).toBe('st-1')
    expect(url.searchParams.get('error_description')).toBe(result.error.error_description)
  })

  it('keeps the redirect URI query and omits an absent state', async () => {
    const result = await validateAuthorizationRequest(
      params({
        client_id: 'cli',
        redirect_uri: 'https://app.example/cb?tenant=7',
        state: undefined,
        code_challenge_method: 'plain',
      }),
      lookupClient,
    )
    if (result.ok || result.respond !== 'redirect') throw new Error('expected a redirect')
    expect(result.location).toMatch(
      /^https:\/\/app\.example\/cb\?tenant=7&error=invalid_request&error_description=/,
    )
    expect(result.location).not.toContain('state=')
  })

  it('redirects a session client to its loopback URI, on the port it asked for', async () => {
    const result = await validateAuthorizationRequest(
      params({ client_id: undefined, redirect_uri: 'http://127.0.0.1:4321/cb', response_type: 'token' }),
      lookupClient,
    )
    expect(result).toMatchObject({
      respond: 'redirect',
      location: expect.stringMatching(/^http:\/\/127\.0\.0\.1:4321\/cb\?error=unsupported_response_type&/),
    })
  })

  it('redirects without state when state itself is repeated', async () => {
    const result = await validateAuthorizationRequest(params({ state: ['a', 'b'] }), lookupClient)
    if (result.ok || result.respond !== 'redirect') throw new Error('expected a redirect')
    expect(result.error.error).toBe('invalid_request')
    expect(new URL(result.location).searchParams.has('state')).toBe(false)
  })
})

describe('redirect URI rules', () => {
  it.each([
    ['http://127.0.0.1:8765/cb', true],
    ['http://[::1]:8765/cb', true],
    ['http://[::1]', true],
    ['http://127.0.0.1:0/cb', false],
    ['https://127.0.0.1:8765/cb', false],
    ['http://[0:0:0:0:0:0:0:1]:8765/cb', false],
  ])('isLoopbackRedirectUri(%s) is %s', (uri, loopback) => {
    expect(isLoopbackRedirectUri(uri)).toBe(loopback)
  })

  it('matches a loopback variant only on the same host, path and query', () => {
    expect(isAllowedRedirectUri(CLI, 'http://[::1]:8765/cb')).toBe(false)
    expect(isAllowedRedirectUri(CLI, 'http://127.0.0.1:8765/cb2')).toBe(false)
    expect(isAllowedRedirectUri(CLI, 'http://127.0.0.1:1/cb?x')).toBe(false)
    expect(isAllowedRedirectUri(NATIVE, 'http://[::1]:1/done')).toBe(true)
  })

  // RFC 8252 §7.3 for a client registered with a loopback URI: any port, the same host, path exact.
  const R_CLIENT = {
    id: 'r',
    redirectUris: ['http://localhost:1410/', 'http://127.0.0.1/cb'],
    offline: false,
  }
  it.each([
    ['http://localhost:1410/', true],
    ['http://localhost:53682/', true],
    ['http://localhost/', true],
    ['http://localhost:53682/other', false],
    ['http://localhost:53682', false],
    ['http://localhost:53682/?x=1', false],
    ['http://127.0.0.1:40000/cb', true],
    ['http://127.0.0.1:40000/cb/', false],
    ['http://localhost:40000/cb', false],
    ['http://[::1]:40000/cb', false],
    ['http://127.0.0.1:40000/', false],
    ['https://localhost:1410/', false],
    ['http://localhost.evil.example:1410/', false],
  ])('a client registered with loopback URIs: %s is %s', (uri, allowed) => {
    expect(isAllowedRedirectUri(R_CLIENT, uri)).toBe(allowed)
  })

  it('keeps localhost from session clients and from isLoopbackRedirectUri (RFC 8252 §8.3)', () => {
    expect(isAllowedRedirectUri(undefined, 'http://localhost:1410/')).toBe(false)
    expect(isLoopbackRedirectUri('http://localhost:1410/')).toBe(false)
    expect(isAllowedRedirectUri(undefined, 'http://127.0.0.1:1410/')).toBe(true)
  })

  it('never allows a fragment, even registered', () => {
    const client = { id: 'f', redirectUris: ['https://f.example/cb#x'], offline: false }
    expect(isAllowedRedirectUri(client, 'https://f.example/cb#x')).toBe(false)
  })

  it('does not let a registered non-loopback URI vary its port', () => {
    const client = { id: 'p', redirectUris: ['https://p.example:8443/cb'], offline: false }
    expect(isAllowedRedirectUri(client, 'https://p.example:9443/cb')).toBe(false)
    expect(isAllowedRedirectUri(client, 'http://127.0.0.1:9443/cb')).toBe(false)
  })
})
