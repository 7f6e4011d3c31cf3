/**
 * The resource server's half of DPoP (RFC 9449) end to end, on Express, Fastify and Hono: the
 * bound tokens oauth4webapi and openid-client obtain from the reference server call `/api/v1`
 * with their libraries' own proofs, before and after a refresh by the same key, and `/mcp` answers
 * an MCP `initialize` for a token bound to it (RFC 8707). The same bound tokens are refused as
 * `Bearer`, without a proof, with another key's proof, with a proof for another method or URL,
 * with a replayed proof and with the proof of their own token request, each with the challenge
 * docs/authentication.md lists. The servers run on the real clock: the libraries date their proofs.
 */
import * as oauth from 'oauth4webapi'
import * as client from 'openid-client'
import { describe, expect, test } from 'vitest'
import { FRAMEWORKS } from '../../examples/server/flags.js'
import { type DpopKey, dpopKey, dpopKeyOf, dpopProof } from '../dpop/proofs.js'
import { postForm } from '../server/oauth-fixtures.js'
import {
  APP_CLIENT,
  codeGrantFields,
  INSECURE,
  oauth4Code,
  oauth4Refresh,
  oauth4Session,
  openIdCode,
  openIdSession,
  useDpopServers,
} from './dpop-flows.js'

const LISTING = '/api/v1/users/alice/datasets'
// Alice's own datasets, all listed for the scope data.overview.
const ALICE_DATASETS = ['diary', 'open']

const originOf = useDpopServers([APP_CLIENT])

// A challenge the libraries throw is an answer here: its status and headers are what is tested.
async function answered(request: Promise<Response>): Promise<Response> {
  try {
    return await request
  } catch (error) {
    if (error instanceof oauth.WWWAuthenticateChallengeError) return error.response
    if (error instanceof client.WWWAuthenticateChallengeError) return error.response
    throw error
  }
}

async function names(response: Response): Promise<string[]> {
  const body = (await response.json()) as { results: { name: string }[] }
  return body.results.map((result) => result.name).sort()
}

type Refusal = readonly [name: string, headers: Record<string, string>, error: string, description: string]

/**
 * Asserts that `token`, bound to `key`, lists Alice's datasets with a good proof, then is refused
 * as Bearer, without a proof, with another key's proof, for another method or URL, and replayed;
 * `more` are further proofs sent with the DPoP scheme and the error and description each gets.
 */
async function refusesWithoutItsKey(
  origin: string,
  token: string,
  key: DpopKey,
  more: readonly (readonly [name: string, dpop: string, error: string, description: string])[] = [],
): Promise<void> {
  const other = await dpopKey()
  const target = `${origin}${LISTING}`
  const get = (headers: Record<string, string>) => fetch(target, { headers })
  const proof = (signer: DpopKey, method = 'GET', url = target) => dpopProof(signer, { method, url, token })
  const good = await proof(key)
  const accepted = await get({ authorization: `DPoP ${token}`, dpop: good })
  expect(accepted.status).toBe(200)
  expect(await names(accepted)).toEqual(ALICE_DATASETS)
  const elsewhere = `${origin}/api/v1/users/bob/datasets`
  const cases: readonly Refusal[] = [
    [
      'as Bearer, with a good proof',
      { authorization: `Bearer ${token}`, dpop: await proof(key) },
      'invalid_token',
      'the token is bound to a DPoP key: send it with the DPoP scheme and a proof',
    ],
    [
      'as Bearer, without a proof',
      { authorization: `Bearer ${token}` },
      'invalid_token',
      'the token is bound to a DPoP key: send it with the DPoP scheme and a proof',
    ],
    [
      'without a proof',
      { authorization: `DPoP ${token}` },
      'invalid_token',
      'the DPoP-bound token came without a DPoP proof',
    ],
    [
      "another key's proof",
      { authorization: `DPoP ${token}`, dpop: await proof(other) },
      'invalid_dpop_proof',
      'the proof is signed by another key than the token is bound to',
    ],
    [
      'a proof for POST',
      { authorization: `DPoP ${token}`, dpop: await proof(key, 'POST') },
      'invalid_dpop_proof',
      'the proof\'s htm is "POST", expected "GET"',
    ],
    [
      'a proof for another URL',
      { authorization: `DPoP ${token}`, dpop: await proof(key, 'GET', elsewhere) },
      'invalid_dpop_proof',
      `the proof's htu is "${elsewhere}", expected "${target}"`,
    ],
    [
      'a replayed proof',
      { authorization: `DPoP ${token}`, dpop: good },
      'invalid_dpop_proof',
      'the proof was used before',
    ],
    ...more.map(
      ([name, dpop, error, description]): Refusal => [
        name,
        { authorization: `DPoP ${token}`, dpop },
        error,
        description,
      ],
    ),
  ]
  for (const [name, headers, error, description] of cases) {
    const refused = await get(headers)
    const challenge = refused.headers.get('www-authenticate') ?? ''
    const body = (await refused.json()) as { error?: { code?: string } }
    expect({ name, status: refused.status, code: body.error?.code }).toEqual({
      name,
      status: 401,
      code: error,
    })
    expect(challenge).toMatch(/^DPoP realm="data-api", /)
    // error_description keeps to RFC 6750 §3's grammar, which has no quote: quotes come as apostrophes.
    expect(challenge).toContain(`error="${error}", error_description="${description.replaceAll('"', "'")}"`)
    expect(challenge).toContain('algs="ES256 EdDSA Ed25519 RS256 PS256"')
  }
}

describe.each(FRAMEWORKS)('DPoP-bound tokens at the API of the reference server on %s', (framework) => {
  const origin = () => originOf(framework)

  test('oauth4webapi: its proofs reach /api/v1 before and after a refresh, and /mcp for a /mcp token', async () => {
    const session = await oauth4Session(origin())
    const { pair, DPoP } = session
    const call = (token: string) =>
      answered(
        oauth.protectedResourceRequest(token, 'GET', new URL(LISTING, origin()), undefined, undefined, {
          DPoP,
          ...INSECURE,
        }),
      )
    const tokens = await oauth4Code(origin(), session)
    expect(tokens.token_type).toBe('dpop')
    const listed = await call(tokens.access_token)
    expect(listed.status).toBe(200)
    expect(await names(listed)).toEqual(ALICE_DATASETS)

    const refreshed = await oauth4Refresh(session, tokens.refresh_token!, DPoP)
    const again = await call(refreshed.access_token)
    expect(again.status).toBe(200)
    expect(await names(again)).toEqual(ALICE_DATASETS)
    // The refreshed token, without the library: refused unless proven by the same key.
    await refusesWithoutItsKey(origin(), refreshed.access_token, await dpopKeyOf(pair))

    // A token for /mcp, bound to the same key: the MCP endpoint's own policy checks the proof.
    const forMcp = await oauth4Code(origin(), session, { resource: `${origin()}/mcp` })
    const initialize = await answered(
      oauth.protectedResourceRequest(
        forMcp.access_token,
        'POST',
        new URL('/mcp', origin()),
        new Headers({ 'content-type': 'application/json', accept: 'application/json, text/event-stream' }),
        JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: {
            protocolVersion: '2025-06-18',
            capabilities: {},
            clientInfo: { name: 'dpop-e2e', version: '1.0.0' },
          },
        }),
        { DPoP, ...INSECURE },
      ),
    )
    expect(initialize.status).toBe(200)
    expect(await initialize.text()).toContain('"serverInfo"')
    // The API refuses the /mcp token, proof or not: it is for another resource.
    const elsewhere = await call(forMcp.access_token)
    expect(elsewhere.status).toBe(401)
    expect(elsewhere.headers.get('www-authenticate')).toContain('error="invalid_token"')
  })

  test('openid-client: fetchProtectedResource with its DPoP handle, before and after a refresh', async () => {
    const session = await openIdSession(origin())
    const { config, pair, DPoP } = session
    const tokens = await openIdCode(origin(), session)
    const call = (token: string) =>
      answered(
        client.fetchProtectedResource(
          config,
          token,
          new URL(LISTING, origin()),
          'GET',
          undefined,
          undefined,
          {
            DPoP,
          },
        ),
      )
    const listed = await call(tokens.access_token)
    expect(listed.status).toBe(200)
    expect(await names(listed)).toEqual(ALICE_DATASETS)
    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!, undefined, { DPoP })
    const again = await call(refreshed.access_token)
    expect(again.status).toBe(200)
    expect(await names(again)).toEqual(ALICE_DATASETS)
    await refusesWithoutItsKey(origin(), refreshed.access_token, await dpopKeyOf(pair))
  })

  test('the bound token without its key, or with a wrong proof, is a 401 DPoP challenge', async () => {
    const key = await dpopKey()
    const tokenUrl = `${origin()}/oauth/token`
    const fields = await codeGrantFields(origin(), 'app')
    const tokenProof = await dpopProof(key, { method: 'POST', url: tokenUrl })
    const issued = await postForm(tokenUrl, fields, { dpop: tokenProof })
    expect([issued.status, issued.body.token_type]).toEqual([200, 'DPoP'])
    const token = issued.body.access_token as string
    await refusesWithoutItsKey(origin(), token, key, [
      // The proof that got the token names the token endpoint and POST: useless at the API.
      [
        'the proof of its token request',
        tokenProof,
        'invalid_dpop_proof',
        'the proof\'s htm is "POST", expected "GET"',
      ],
    ])
  })
})
