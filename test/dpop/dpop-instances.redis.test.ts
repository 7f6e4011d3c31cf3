/**
 * Two reference servers on one Redis (`--store redis://…`), on two frameworks, behind one public
 * URL as a load balancer would put them: a proof accepted by one instance is refused by the other,
 * at the API and at the token endpoint (the issuer and the API share the instances' replay cache).
 */
import { afterAll, beforeAll, expect, test } from 'vitest'
import { RedisOAuthStateStore, RedisTokenStore } from '../../adapters/redis/index.js'
import { loadSeed } from '../../examples/server/seed/load.js'
import { type StartedServer, startServer } from '../../examples/server/server.js'
import { issueAuthorizationCode } from '../../src/oauth/issue-authorization-code.js'
import { validateAuthorizationRequest } from '../../src/oauth/validate-authorization-request.js'
import { createOAuthToken } from '../../src/tokens/token-record.js'
import { sendRaw } from '../adapters/http-client.js'
import { type RedisServer, startRedisServer } from '../adapters/redis/redis-server.js'
import { CONFORMANCE_SEED } from '../conformance/seed.js'
import { pkcePair, postForm } from '../server/oauth-fixtures.js'
import { dpopKey, dpopProof } from './proofs.js'

const PUBLIC = 'https://data.example.org'
const PATH = '/api/v1/datasets/owner/o-open'

let redis: RedisServer
let servers: StartedServer[] = []

beforeAll(async () => {
  redis = await startRedisServer()
  const seed = await loadSeed(CONFORMANCE_SEED)
  servers = [
    await startServer({
      seed,
      framework: 'express',
      host: '127.0.0.1',
      port: 0,
      publicUrl: PUBLIC,
      store: { kind: 'redis', url: redis.url },
    }),
    await startServer({
      seed,
      framework: 'fastify',
      host: '127.0.0.1',
      port: 0,
      publicUrl: PUBLIC,
      store: { kind: 'redis', url: redis.url },
    }),
  ]
}, 60_000)

afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()))
  await redis?.stop()
})

test('a proof used on one instance is refused on the other', async () => {
  const key = await dpopKey()
  const { record, value } = createOAuthToken({
    userId: 'u',
    scopes: 'data.data',
    dpopJkt: key.jkt,
    now: Date.now(),
  })
  const tokens = new RedisTokenStore({ redis: redis.url })
  try {
    await tokens.ready()
    await tokens.save(record)
  } finally {
    await tokens.close()
  }
  const proof = await dpopProof(key, { method: 'GET', url: `${PUBLIC}${PATH}`, token: value })
  const headers = { authorization: `DPoP ${value}`, dpop: proof }
  const [first, second] = servers as [StartedServer, StartedServer]
  expect((await sendRaw(first.port, { path: PATH, headers })).status).toBe(200)
  const replayed = await sendRaw(second.port, { path: PATH, headers })
  expect(replayed.status).toBe(401)
  expect(replayed.headers['www-authenticate']).toContain('error_description="the proof was used before"')
  // A fresh proof is accepted on the second instance: the token itself is fine there.
  const fresh = await dpopProof(key, { method: 'GET', url: `${PUBLIC}${PATH}`, token: value })
  expect((await sendRaw(second.port, { path: PATH, headers: { ...headers, dpop: fresh } })).status).toBe(200)
}, 60_000)

// A code for the public client `pub`, saved where both instances find it (the issuer's state on Redis).
async function codeFor(challenge: string): Promise<string> {
  const lookup = async (id: string) =>
    id === 'pub' ? { id: 'pub', redirectUris: ['http://127.0.0.1:8765/cb'], offline: false } : undefined
  const validated = await validateAuthorizationRequest(
    {
      response_type: 'code',
      client_id: 'pub',
      redirect_uri: 'http://127.0.0.1:8765/cb',
      code_challenge: challenge,
      code_challenge_method: 'S256',
      scope: 'data.metadata',
      state: 's',
    },
    lookup,
  )
  if (!validated.ok) throw new Error(validated.error.message)
  const state = new RedisOAuthStateStore({ redis: redis.url })
  try {
    await state.ready()
    return (
      await issueAuthorizationCode({ request: validated.request, userId: 'u', now: Date.now(), store: state })
    ).code
  } finally {
    await state.close()
  }
}

test('a token request replayed on the other instance is refused, and its code stays good', async () => {
  const key = await dpopKey()
  const url = `${PUBLIC}/oauth/token`
  const [first, second] = servers as [StartedServer, StartedServer]
  const redeem = async (server: StartedServer, code: string, verifier: string, dpop: string) =>
    postForm(
      `${server.url}/oauth/token`,
      {
        grant_type: 'authorization_code',
        client_id: 'pub',
        code,
        redirect_uri: 'http://127.0.0.1:8765/cb',
        code_verifier: verifier,
      },
      { dpop },
    )
  const proof = await dpopProof(key, { method: 'POST', url })
  const one = pkcePair()
  const accepted = await redeem(first, await codeFor(one.challenge), one.verifier, proof)
  expect([accepted.status, (accepted.body as { token_type: string }).token_type]).toEqual([200, 'DPoP'])
  const two = pkcePair()
  const code = await codeFor(two.challenge)
  expect((await redeem(second, code, two.verifier, proof)).body).toMatchObject({
    error: 'invalid_dpop_proof',
    error_description: 'the proof was used before',
  })
  // The replay was refused before the code was consumed: a fresh proof redeems it.
  const fresh = await dpopProof(key, { method: 'POST', url })
  expect((await redeem(second, code, two.verifier, fresh)).status).toBe(200)
}, 60_000)
