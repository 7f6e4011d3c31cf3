/**
 * Against a real OpenID provider (`oidc-provider`) on loopback: a client gets a JWT access token
 * for this API's resource indicator (RFC 8707) with the client-credentials grant, and a route
 * guarded by the JWT store (keys found through discovery, `typ: at+jwt` required) accepts it with
 * the scopes the provider granted, while the provider's token for another resource is refused.
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { exportJWK, generateKeyPair } from 'jose'
import Provider from 'oidc-provider'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { JwtTokenStore } from '../../src/jwt/index.js'
import { createAccessPolicy } from '../../src/policy.js'
import { startApp } from '../adapters/apps.js'
import { createFixture } from '../adapters/fixture.js'
import { sendRaw } from '../adapters/http-client.js'
import { listening } from '../adapters/listen.js'

const RESOURCE = 'https://data.example.org/api'
const OTHER = 'https://tools.example.org/mcp'
const CLIENT = { id: 'reports', secret: 'a client secret of this test' }

let issuer: string
let close: () => Promise<void>

beforeAll(async () => {
  const server = createServer()
  const started = await listening(server.listen(0, '127.0.0.1'))
  close = started.close
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const { privateKey } = await generateKeyPair('ES256', { extractable: true })
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: CLIENT.id,
        client_secret: CLIENT.secret,
        grant_types: ['client_credentials'],
        redirect_uris: [],
        response_types: [],
        id_token_signed_response_alg: 'ES256',
      },
    ],
    jwks: { keys: [{ ...(await exportJWK(privateKey)), kid: 'es-1', alg: 'ES256', use: 'sig' }] },
    scopes: ['data.data', 'wokflow.read', 'profile'],
    ttl: { ClientCredentials: 600 },
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => RESOURCE,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx: unknown, resource: string) => ({
          scope: 'data.data wokflow.read profile',
          audience: resource,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'ES256' } },
        }),
      },
    },
  })
  server.on('request', provider.callback())
})

afterAll(async () => {
  await close?.()
})

async function clientCredentials(resource: string, scope: string): Promise<string> {
  const response = await fetch(`${issuer}/token`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${btoa(`${CLIENT.id}:${CLIENT.secret}`)}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams({ grant_type: 'client_credentials', resource, scope }).toString(),
  })
  const body = (await response.json()) as { access_token?: string; token_type?: string }
  expect(response.status, JSON.stringify(body)).toBe(200)
  expect(body.token_type).toBe('Bearer')
  return body.access_token!
}

test('a client-credentials JWT from oidc-provider guards a route with the scopes it was granted', async () => {
  const tokens = new JwtTokenStore({ issuer, algorithms: ['ES256'], requireTyp: true })
  const errors: unknown[] = []
  const policy = createAccessPolicy({ tokens, resource: RESOURCE, onError: (error) => errors.push(error) })
  const token = await clientCredentials(RESOURCE, 'data.data profile')
  const result = await policy.authenticate({
    authorization: [`Bearer ${token}`],
    protocol: 'https',
    clientAddress: '127.0.0.1',
  })
  expect(errors).toEqual([])
  expect(result.ok && result.principal).toMatchObject({
    userId: CLIENT.id,
    clientId: CLIENT.id,
    tokenKind: 'oauth',
  })
  expect(result.ok && String(result.principal.scopes)).toBe('public data.data')
  if (result.ok) {
    const dataset = { kind: 'dataset', publicLevel: 'none', userLevel: 'edit' } as const
    expect(policy.authorize(result.principal, 'table.read', dataset).allowed).toBe(true)
    expect(policy.authorize(result.principal, 'dataset.update', dataset).allowed).toBe(false)
  }

  const elsewhere = await clientCredentials(OTHER, 'data.data')
  const refused = await policy.authenticate({
    authorization: [`Bearer ${elsewhere}`],
    protocol: 'https',
    clientAddress: '127.0.0.1',
  })
  expect(!refused.ok && refused.decision.code).toBe('invalid_token')

  // And through an adapter, over HTTP: the route answers the token as it would a dap_ token.
  const app = await startApp('hono', { ...(await createFixture()), policy }, false)
  try {
    const open = await sendRaw(app.port, {
      path: '/api/v1/datasets/acme/open',
      headers: { authorization: `Bearer ${token}` },
    })
    expect(open.status).toBe(200)
    const hidden = await sendRaw(app.port, {
      path: '/api/v1/datasets/acme/members/metadata',
      headers: { authorization: `Bearer ${token}` },
    })
    expect(hidden.status).toBe(404)
    const other = await sendRaw(app.port, {
      path: '/api/v1/datasets/acme/open',
      headers: { authorization: `Bearer ${elsewhere}` },
    })
    expect(other.status).toBe(401)
  } finally {
    await app.close()
  }
})
