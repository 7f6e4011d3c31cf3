/**
 * A DPoP-bound token at the guard of every framework, over real HTTP on 127.0.0.1: accepted with a
 * fresh proof by its key for this request, refused in every other way (RFC 9449 §7.1), with the
 * same status, challenge and body on Express, Fastify and Hono.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { MemoryDpopReplayCache } from '../../src/dpop/index.js'
import { createAccessPolicy } from '../../src/index.js'
import { MemoryTokenStore } from '../../src/tokens/memory-token-store.js'
import { createOAuthToken } from '../../src/tokens/token-record.js'
import { startApp } from '../adapters/apps.js'
import { createFixture, type Fixture, RESOURCE } from '../adapters/fixture.js'
import { type RawAnswer, sendRaw } from '../adapters/http-client.js'
import { FRAMEWORKS, type Framework, type RunningApp } from '../adapters/running-app.js'
import { type DpopKey, dpopKey, dpopProof, type ProofFor } from './proofs.js'

const PATH = '/api/v1/datasets/acme/open'
// The policy's resource names the origin every proof's htu must carry, whatever Host the client sends.
const URL_ = `${new URL(RESOURCE).origin}${PATH}`
const ALGS = 'algs="ES256 EdDSA Ed25519 RS256 PS256"'
const SECRET = 'a nonce secret the instances share, 32+ bytes'

let key: DpopKey
let otherKey: DpopKey
let bound: string
let unbound: string
const apps = {} as Record<Framework, RunningApp>
const nonceApps = {} as Record<Framework, RunningApp>
const cacheDown = new Error('replay cache down')
const heard: unknown[] = []
let failing = false

beforeAll(async () => {
  key = await dpopKey()
  otherKey = await dpopKey('EdDSA')
  const base = await createFixture()
  const tokens = new MemoryTokenStore()
  const now = Date.now()
  const boundToken = createOAuthToken({ userId: 'alice', scopes: 'data.data', dpopJkt: key.jkt, now })
  const unboundToken = createOAuthToken({ userId: 'alice', scopes: 'data.data', now })
  await tokens.save(boundToken.record)
  await tokens.save(unboundToken.record)
  bound = boundToken.value
  unbound = unboundToken.value
  const memory = new MemoryDpopReplayCache()
  const replayCache = {
    claim: (name: string, expiresAt: number) => {
      if (failing) throw cacheDown
      return memory.claim(name, expiresAt)
    },
  }
  const fixture: Fixture = {
    ...base,
    policy: createAccessPolicy({
      tokens,
      resource: RESOURCE,
      dpop: { replayCache },
      onError: (error) => heard.push(error),
    }),
  }
  const nonceFixture: Fixture = {
    ...base,
    policy: createAccessPolicy({ tokens, resource: RESOURCE, dpop: { nonces: { secret: SECRET } } }),
  }
  for (const framework of FRAMEWORKS) {
    apps[framework] = await startApp(framework, fixture, false)
    nonceApps[framework] = await startApp(framework, nonceFixture, false)
  }
})

afterAll(async () => {
  await Promise.all([...Object.values(apps), ...Object.values(nonceApps)].map((app) => app.close()))
})

interface Row {
  readonly name: string
  /** The request's headers, given fresh values (a new proof for each framework). */
  readonly headers: () => Promise<Record<string, string | readonly string[]>>
  readonly method?: string
  readonly status: number
  readonly code?: string
  readonly challenge?: string
}

const proofFor = (over: Partial<ProofFor> = {}, by: DpopKey = key) =>
  dpopProof(by, { method: 'GET', url: URL_, token: bound, ...over })
const dpop = async (over: Partial<ProofFor> = {}, by?: DpopKey) => ({
  authorization: `DPoP ${bound}`,
  dpop: await proofFor(over, by),
})
const proofDenial = (description: string) =>
  `DPoP realm="data-api", error="invalid_dpop_proof", error_description="${description}", ${ALGS}, scope="data.overview", resource_metadata="https://data.example.test/.well-known/oauth-protected-resource/api/v1"`
const tokenDenial = (description: string) =>
  `DPoP realm="data-api", error="invalid_token", error_description="${description}", ${ALGS}, scope="data.overview", resource_metadata="https://data.example.test/.well-known/oauth-protected-resource/api/v1"`

const ROWS: readonly Row[] = [
  { name: 'a fresh proof by the bound key', headers: () => dpop(), status: 200 },
  {
    name: 'the scheme in lower case',
    headers: async () => ({ authorization: `dpop ${bound}`, dpop: await proofFor() }),
    status: 200,
  },
  {
    name: 'the bound token as Bearer',
    headers: async () => ({ authorization: `Bearer ${bound}`, dpop: await proofFor() }),
    status: 401,
    code: 'invalid_token',
    challenge: tokenDenial('the token is bound to a DPoP key: send it with the DPoP scheme and a proof'),
  },
  {
    name: 'no proof',
    headers: async () => ({ authorization: `DPoP ${bound}` }),
    status: 401,
    code: 'invalid_token',
    challenge: tokenDenial('the DPoP-bound token came without a DPoP proof'),
  },
  {
    name: 'two DPoP headers',
    headers: async () => ({ authorization: `DPoP ${bound}`, dpop: [await proofFor(), await proofFor()] }),
    status: 401,
    code: 'invalid_dpop_proof',
    challenge: proofDenial('more than one DPoP header'),
  },
  {
    name: "another key's proof",
    headers: () => dpop({}, otherKey),
    status: 401,
    code: 'invalid_dpop_proof',
    challenge: proofDenial('the proof is signed by another key than the token is bound to'),
  },
  {
    name: 'a proof for another method',
    headers: () => dpop({ method: 'POST' }),
    status: 401,
    code: 'invalid_dpop_proof',
    challenge: proofDenial("the proof's htm is 'POST', expected 'GET'"),
  },
  {
    name: 'a proof for another URL',
    headers: () => dpop({ url: 'https://data.example.test/api/v1/datasets/acme/members' }),
    status: 401,
    code: 'invalid_dpop_proof',
    challenge: proofDenial(
      "the proof's htu is 'https://data.example.test/api/v1/datasets/acme/members', expected 'https://data.example.test/api/v1/datasets/acme/open'",
    ),
  },
  {
    name: 'a proof for the Host the client sent rather than the public origin',
    headers: () => dpop({ url: 'http://127.0.0.1/api/v1/datasets/acme/open' }),
    status: 401,
    code: 'invalid_dpop_proof',
  },
  {
    name: 'a stale proof',
    headers: () => dpop({ iat: Math.floor(Date.now() / 1000) - 400 }),
    status: 401,
    code: 'invalid_dpop_proof',
    challenge: proofDenial("the proof's iat is more than 300 s in the past"),
  },
  {
    name: 'a proof whose ath is for another token',
    headers: () => dpop({ token: unbound }),
    status: 401,
    code: 'invalid_dpop_proof',
    challenge: proofDenial("the proof's ath is not the hash of the access token it came with"),
  },
  {
    name: 'an unbound token with the DPoP scheme',
    headers: async () => ({ authorization: `DPoP ${unbound}`, dpop: await proofFor({ token: unbound }) }),
    status: 401,
    code: 'invalid_token',
    challenge: tokenDenial('the token is not bound to a DPoP key: send it with the Bearer scheme'),
  },
  {
    name: 'an unknown token with the DPoP scheme',
    headers: async () => ({ authorization: `DPoP dao_${'A'.repeat(40)}`, dpop: await proofFor() }),
    status: 401,
    code: 'invalid_token',
    challenge: tokenDenial('the token is malformed, unknown, expired or revoked'),
  },
  {
    name: 'the DPoP scheme without a token',
    headers: async () => ({ authorization: 'DPoP', dpop: await proofFor() }),
    status: 400,
    code: 'invalid_request',
  },
  {
    name: 'the unbound token as Bearer, as before',
    headers: async () => ({ authorization: `Bearer ${unbound}` }),
    status: 200,
  },
]

const MESSAGES: Readonly<Record<number, string>> = { 400: 'Bad request', 401: 'Invalid credentials' }

async function sendTo(apps_: Record<Framework, RunningApp>, row: Row): Promise<Record<Framework, RawAnswer>> {
  const answers = {} as Record<Framework, RawAnswer>
  for (const framework of FRAMEWORKS) {
    answers[framework] = await sendRaw(apps_[framework].port, {
      method: row.method ?? 'GET',
      path: PATH,
      headers: await row.headers(),
    })
  }
  return answers
}

describe('a DPoP-bound token at the guard, on every framework', () => {
  test.each(ROWS.map((row) => [row.name, row] as const))('%s', async (_name, row) => {
    const answers = await sendTo(apps, row)
    for (const framework of FRAMEWORKS) {
      const answer = answers[framework]
      expect({ framework, status: answer.status }).toEqual({ framework, status: row.status })
      if (row.code !== undefined) {
        expect(JSON.parse(answer.body)).toEqual({
          error: { status: row.status, message: MESSAGES[row.status], code: row.code },
        })
      }
      if (row.challenge !== undefined) expect(answer.headers['www-authenticate']).toBe(row.challenge)
      expect(answer.headers['www-authenticate']).toBe(answers.express.headers['www-authenticate'])
    }
  })

  test('a proof is used once: the same proof again is refused', async () => {
    for (const framework of FRAMEWORKS) {
      const headers = await dpop()
      const first = await sendRaw(apps[framework].port, { path: PATH, headers })
      const again = await sendRaw(apps[framework].port, { path: PATH, headers })
      expect([framework, first.status, again.status]).toEqual([framework, 200, 401])
      expect(again.headers['www-authenticate']).toBe(proofDenial('the proof was used before'))
    }
  })

  test('a replay cache that fails is a 503 told to onError, never an allow', async () => {
    failing = true
    try {
      for (const framework of FRAMEWORKS) {
        heard.length = 0
        const answer = await sendRaw(apps[framework].port, { path: PATH, headers: await dpop() })
        expect([framework, answer.status]).toEqual([framework, 503])
        expect(heard).toEqual([cacheDown])
      }
    } finally {
      failing = false
    }
  })

  test('server nonces: use_dpop_nonce with DPoP-Nonce, then the proof with that nonce', async () => {
    for (const framework of FRAMEWORKS) {
      const port = nonceApps[framework].port
      const first = await sendRaw(port, { path: PATH, headers: await dpop() })
      expect([framework, first.status]).toEqual([framework, 401])
      const nonce = first.headers['dpop-nonce']
      expect(typeof nonce).toBe('string')
      expect(first.headers['www-authenticate']).toBe(
        `DPoP realm="data-api", error="use_dpop_nonce", error_description="the proof must carry the server nonce of DPoP-Nonce", ${ALGS}, scope="data.overview", resource_metadata="https://data.example.test/.well-known/oauth-protected-resource/api/v1"`,
      )
      expect(JSON.parse(first.body).error.code).toBe('use_dpop_nonce')
      const second = await sendRaw(port, { path: PATH, headers: await dpop({ nonce: nonce as string }) })
      expect([framework, second.status]).toEqual([framework, 200])
    }
  })
})
