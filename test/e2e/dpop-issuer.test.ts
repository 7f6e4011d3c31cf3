/**
 * The issuer's half of DPoP (RFC 9449) end to end, on Express, Fastify and Hono: oauth4webapi and
 * openid-client 6, each with its own DPoP support and nothing adapted, complete the authorization
 * code flow with PKCE and a refresh, receive `token_type: DPoP`, and introspection names the key
 * (`cnf.jkt`); the metadata lists the proof algorithms. Hand-made proofs show the refusals:
 * a replayed proof, a proof for another URL (the Host header's) or method, a refresh by another
 * key, a code requested with `dpop_jkt` redeemed by another key, a `dpopBound` client without one.
 * The servers run on the real clock: the libraries date their proofs with it.
 */
import * as oauth from 'oauth4webapi'
import * as client from 'openid-client'
import { describe, expect, test } from 'vitest'
import { FRAMEWORKS } from '../../examples/server/flags.js'
import { DPOP_ALGORITHMS } from '../../src/dpop/index.js'
import { type DpopKey, dpopKey, dpopProof } from '../dpop/proofs.js'
import { basic, CLI_REDIRECT, postForm, RS_SECRET } from '../server/oauth-fixtures.js'
import {
  APP_CLIENT,
  codeGrantFields,
  oauth4Code,
  oauth4Refresh,
  oauth4Session,
  openIdCode,
  openIdSession,
  useDpopServers,
} from './dpop-flows.js'

const originOf = useDpopServers([
  APP_CLIENT,
  // Registered as DPoP-bound: no token without a proof.
  { id: 'bound', redirectUris: [CLI_REDIRECT], offline: true, dpopBound: true },
])

// A hand-made proof for a request to `htu` by `htm`, without a token.
function proof(key: DpopKey, htu: string, htm = 'POST'): Promise<string> {
  return dpopProof(key, { method: htm, url: htu })
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
  const origin = () => originOf(framework)
  const tokenUrl = () => `${origin()}/oauth/token`

  // Alice approves an authorization request of `clientId`; the token request's fields.
  const code = (clientId: string, extra: Record<string, string> = {}) =>
    codeGrantFields(origin(), clientId, extra)

  function redeem(fields: Record<string, string>, headers: Record<string, string> = {}) {
    return postForm(tokenUrl(), fields, headers)
  }

  test('oauth4webapi: code + PKCE with dpop_jkt, then a refresh, bound to its key; another key is refused', async () => {
    const session = await oauth4Session(origin())
    expect(session.as.dpop_signing_alg_values_supported).toEqual(DPOP_ALGORITHMS)
    const { DPoP } = session
    const jkt = await DPoP.calculateThumbprint()
    const tokens = await oauth4Code(origin(), session, { dpop_jkt: jkt })
    expect(tokens.token_type).toBe('dpop')
    expect(await introspect(origin(), tokens.access_token)).toMatchObject({
      active: true,
      token_type: 'DPoP',
      cnf: { jkt },
    })

    const refreshed = await oauth4Refresh(session, tokens.refresh_token!, DPoP)
    expect(refreshed.token_type).toBe('dpop')
    expect(await introspect(origin(), refreshed.access_token)).toMatchObject({ cnf: { jkt } })

    // The family is bound to the key: another key's proof, or none, refreshes nothing.
    const other = oauth.DPoP(session.app, await oauth.generateKeyPair('ES256'))
    await expect(oauth4Refresh(session, refreshed.refresh_token!, other)).rejects.toMatchObject({
      error: 'invalid_dpop_proof',
    })
    await expect(oauth4Refresh(session, refreshed.refresh_token!, undefined)).rejects.toMatchObject({
      error: 'invalid_dpop_proof',
    })
  })

  test('openid-client: a confidential client gets DPoP tokens at the code grant and the refresh', async () => {
    const session = await openIdSession(origin())
    expect(session.config.serverMetadata().dpop_signing_alg_values_supported).toEqual(DPOP_ALGORITHMS)
    const { config, DPoP } = session
    const jkt = await DPoP.calculateThumbprint()
    const tokens = await openIdCode(origin(), session)
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
    const key = await dpopKey()
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
    const [key, other] = [await dpopKey(), await dpopKey()]
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
