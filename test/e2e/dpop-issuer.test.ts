/**
 * The issuer's half of DPoP (RFC 9449) end to end, on Express, Fastify and Hono: oauth4webapi and
 * openid-client 6, each with its own DPoP support and nothing adapted, complete the authorization
 * code flow with PKCE and a refresh, receive `token_type: DPoP`, and introspection names the key
 * (`cnf.jkt`); the metadata lists the proof algorithms. Hand-made proofs show the refusals:
 * a replayed proof, a proof for another URL (the Host header's) or method, a refresh by another
 * key, a code requested with `dpop_jkt` redeemed by another key, a `dpopBound` client without one.
 * The servers run on the real clock: the libraries date their proofs with it.
 */
import { type CryptoKey, exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose'
import * as oauth from 'oauth4webapi'
import * as client from 'openid-client'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { FRAMEWORKS, type Framework } from '../../examples/server/flags.js'
import { loadSeed } from '../../examples/server/seed/load.js'
import { type StartedServer, startServer } from '../../examples/server/server.js'
import { DPOP_ALGORITHMS, jwkThumbprint } from '../../src/dpop/index.js'
import { PageAgent } from '../server/oauth-agent.js'
import {
  ALICE_PASSWORD,
  authorizeThroughPages,
  authorizeUrl,
  basic,
  CLI_REDIRECT,
  CLI_SECRET,
  OAUTH_SEED,
  pkcePair,
  postForm,
  RS_SECRET,
} from '../server/oauth-fixtures.js'

const INSECURE = { [oauth.allowInsecureRequests]: true } as const
const NO_REQUEST_DEADLINE_S = 3_600

let servers: Record<Framework, StartedServer>

beforeAll(async () => {
  const seed = await loadSeed({
    ...OAUTH_SEED,
    clients: [
      ...OAUTH_SEED.clients,
      // Public with offline access: its refresh family is bound to its key.
      { id: 'app', redirectUris: [CLI_REDIRECT], offline: true },
      // Registered as DPoP-bound: no token without a proof.
      { id: 'bound', redirectUris: [CLI_REDIRECT], offline: true, dpopBound: true },
    ],
  })
  const started = await Promise.all(
    FRAMEWORKS.map((framework) => startServer({ seed, framework, host: '127.0.0.1', port: 0 })),
  )
  servers = Object.fromEntries(started.map((server) => [server.framework, server])) as Record<
    Framework,
    StartedServer
  >
})

afterAll(async () => {
  await Promise.all(Object.values(servers ?? {}).map((server) => server.close()))
})

interface Key {
  readonly privateKey: CryptoKey
  readonly jwk: JWK
  readonly jkt: string
}

async function newKey(): Promise<Key> {
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true })
  const jwk = await exportJWK(publicKey)
  return { privateKey, jwk, jkt: jwkThumbprint(jwk as Record<string, unknown>)! }
}

function proof(key: Key, htu: string, htm = 'POST'): Promise<string> {
  return new SignJWT({ jti: crypto.randomUUID(), htm, htu, iat: Math.floor(Date.now() / 1000) })
    .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: key.jwk })
    .sign(key.privateKey)
}

async function introspect(origin: string, token: string): Promise<Record<string, unknown>> {
  const answer = await postForm(
    `${origin}/oauth/introspect`,
    { token },
    { authorization: basic('rs', RS_SECRET) },
  )
  return answer.body
}

describe.each(FRAMEWORKS)('the DPoP issuer on %s', (framework) => {
  const origin = () => servers[framework].url
  const tokenUrl = () => `${origin()}/oauth/token`

  // Alice signs in and approves an authorization request of `clientId`; the code and its verifier.
  async function code(clientId: string, extra: Record<string, string> = {}) {
    const { verifier, challenge } = pkcePair()
    const url = authorizeUrl(origin(), {
      response_type: 'code',
      client_id: clientId,
      redirect_uri: CLI_REDIRECT,
      scope: 'data.overview',
      state: 's',
      code_challenge: challenge,
      code_challenge_method: 'S256',
      ...extra,
    })
    const { callback } = await authorizeThroughPages(new PageAgent(origin()), url, {
      handle: 'alice',
      password: ALICE_PASSWORD,
    })
    const fields = {
      grant_type: 'authorization_code',
      code: callback.searchParams.get('code')!,
      redirect_uri: CLI_REDIRECT,
      code_verifier: verifier,
      ...(clientId !== 'cli' && { client_id: clientId }),
    }
    return fields
  }

  function redeem(fields: Record<string, string>, headers: Record<string, string> = {}) {
    return postForm(tokenUrl(), fields, headers)
  }

  test('oauth4webapi: code + PKCE with dpop_jkt, then a refresh, bound to its key; another key is refused', async () => {
    const as = await oauth.processDiscoveryResponse(
      new URL(origin()),
      await oauth.discoveryRequest(new URL(origin()), { algorithm: 'oauth2', ...INSECURE }),
    )
    expect(as.dpop_signing_alg_values_supported).toEqual(DPOP_ALGORITHMS)
    const app: oauth.Client = { client_id: 'app' }
    const keyPair = await oauth.generateKeyPair('ES256')
    const DPoP = oauth.DPoP(app, keyPair)
    const jkt = await DPoP.calculateThumbprint()
    const verifier = oauth.generateRandomCodeVerifier()
    const url = new URL(as.authorization_endpoint!)
    url.search = new URLSearchParams({
      response_type: 'code',
      client_id: 'app',
      redirect_uri: CLI_REDIRECT,
      scope: 'data.overview',
      state: 'st',
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      dpop_jkt: jkt,
    }).toString()
    const { callback } = await authorizeThroughPages(new PageAgent(origin()), url.href, {
      handle: 'alice',
      password: ALICE_PASSWORD,
    })
    const params = oauth.validateAuthResponse(as, app, callback, 'st')
    const tokens = await oauth.processAuthorizationCodeResponse(
      as,
      app,
      await oauth.authorizationCodeGrantRequest(as, app, oauth.None(), params, CLI_REDIRECT, verifier, {
        DPoP,
        ...INSECURE,
      }),
    )
    expect(tokens.token_type).toBe('dpop')
    expect(await introspect(origin(), tokens.access_token)).toMatchObject({
      active: true,
      token_type: 'DPoP',
      cnf: { jkt },
    })

    const refreshed = await oauth.processRefreshTokenResponse(
      as,
      app,
      await oauth.refreshTokenGrantRequest(as, app, oauth.None(), tokens.refresh_token!, {
        DPoP,
        ...INSECURE,
      }),
    )
    expect(refreshed.token_type).toBe('dpop')
    expect(await introspect(origin(), refreshed.access_token)).toMatchObject({ cnf: { jkt } })

    // The family is bound to the key: another key's proof, or none, refreshes nothing.
    const other = oauth.DPoP(app, await oauth.generateKeyPair('ES256'))
    const stolen = await oauth.refreshTokenGrantRequest(as, app, oauth.None(), refreshed.refresh_token!, {
      DPoP: other,
      ...INSECURE,
    })
    await expect(oauth.processRefreshTokenResponse(as, app, stolen)).rejects.toMatchObject({
      error: 'invalid_dpop_proof',
    })
    const bare = await oauth.refreshTokenGrantRequest(
      as,
      app,
      oauth.None(),
      refreshed.refresh_token!,
      INSECURE,
    )
    await expect(oauth.processRefreshTokenResponse(as, app, bare)).rejects.toMatchObject({
      error: 'invalid_dpop_proof',
    })
  })

  test('openid-client: a confidential client gets DPoP tokens at the code grant and the refresh', async () => {
    const config = await client.discovery(
      new URL(origin()),
      'cli',
      CLI_SECRET,
      client.ClientSecretBasic(CLI_SECRET),
      { algorithm: 'oauth2', execute: [client.allowInsecureRequests], timeout: NO_REQUEST_DEADLINE_S },
    )
    expect(config.serverMetadata().dpop_signing_alg_values_supported).toEqual(DPOP_ALGORITHMS)
    const DPoP = client.getDPoPHandle(config, await client.randomDPoPKeyPair('ES256'))
    const jkt = await DPoP.calculateThumbprint()
    const pkceCodeVerifier = client.randomPKCECodeVerifier()
    const query = new URLSearchParams({
      redirect_uri: CLI_REDIRECT,
      scope: 'data.overview',
      state: 'st',
      code_challenge: await client.calculatePKCECodeChallenge(pkceCodeVerifier),
      code_challenge_method: 'S256',
    })
    const { callback } = await authorizeThroughPages(
      new PageAgent(origin()),
      client.buildAuthorizationUrl(config, query).href,
      { handle: 'alice', password: ALICE_PASSWORD },
    )
    const tokens = await client.authorizationCodeGrant(
      config,
      callback,
      { pkceCodeVerifier, expectedState: 'st' },
      undefined,
      { DPoP },
    )
    expect(tokens.token_type).toBe('dpop')
    expect(await introspect(origin(), tokens.access_token)).toMatchObject({
      token_type: 'DPoP',
      cnf: { jkt },
    })
    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!, undefined, { DPoP })
    expect(refreshed.token_type).toBe('dpop')
    expect(await introspect(origin(), refreshed.access_token)).toMatchObject({ cnf: { jkt } })
  })

  test('a replayed proof, and proofs for another URL or method, are invalid_dpop_proof', async () => {
    const key = await newKey()
    const used = await proof(key, tokenUrl())
    const first = await redeem(await code('app'), { dpop: used })
    expect([first.status, first.body.token_type]).toEqual([200, 'DPoP'])
    const cases = [
      { name: 'replayed', dpop: used },
      // The Host header names the server another way: htu is the published URL, never the Host's.
      { name: 'Host-derived htu', dpop: await proof(key, tokenUrl().replace('127.0.0.1', 'localhost')) },
      { name: 'GET', dpop: await proof(key, tokenUrl(), 'GET') },
    ]
    for (const { name, dpop } of cases) {
      const refused = await redeem(await code('app'), { dpop })
      expect([name, refused.status, refused.body.error]).toEqual([name, 400, 'invalid_dpop_proof'])
      expect(typeof refused.body.error_description).toBe('string')
    }
  })

  test('dpop_jkt binds the code to a key; a dpopBound client needs a proof', async () => {
    const [key, other] = [await newKey(), await newKey()]
    const mismatch = await redeem(await code('app', { dpop_jkt: key.jkt }), {
      dpop: await proof(other, tokenUrl()),
    })
    expect([mismatch.status, mismatch.body.error]).toEqual([400, 'invalid_dpop_proof'])
    const missing = await redeem(await code('app', { dpop_jkt: key.jkt }))
    expect([missing.status, missing.body.error]).toEqual([400, 'invalid_dpop_proof'])

    const unproven = await redeem(await code('bound'))
    expect([unproven.status, unproven.body.error]).toEqual([400, 'invalid_dpop_proof'])
    const proven = await redeem(await code('bound'), { dpop: await proof(key, tokenUrl()) })
    expect([proven.status, proven.body.token_type]).toEqual([200, 'DPoP'])
    expect(await introspect(origin(), proven.body.access_token as string)).toMatchObject({
      cnf: { jkt: key.jkt },
    })
  })
})
