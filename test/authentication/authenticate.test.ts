import { beforeAll, describe, expect, test } from 'vitest'
import { authenticateRequest, extractBearerToken } from '../../src/authentication/authenticate.js'
import { parseBearerHeader } from '../../src/authentication/bearer.js'
import { renderDenial } from '../../src/authentication/http-denial.js'
import { ANONYMOUS } from '../../src/decisions/principal.js'
import { MemoryTokenStore } from '../../src/tokens/memory-token-store.js'
import { generateTokenValue } from '../../src/tokens/token-format.js'
import { hashTokenValue as hashOf } from '../../src/tokens/token-hash.js'
import { createApiToken, revokeToken, type TokenRecord } from '../../src/tokens/token-record.js'
import type { TokenStore } from '../../src/tokens/token-store.js'

const NOW = Date.parse('2026-11-22T12:00:00Z')
const store = new MemoryTokenStore()
let good: string
let revoked: string
let expired: string
const unknown = generateTokenValue('api')

beforeAll(async () => {
  const make = async (name: string, expiresAt?: number) => {
    const created = createApiToken({
      userId: 'alice',
      name,
      scopes: 'data.data',
      now: NOW - 10_000,
      ...(expiresAt === undefined ? {} : { expiresAt }),
    })
    await store.save(created.record)
    return created
  }
  good = (await make('good')).value
  const toRevoke = await make('revoked')
  await store.update(revokeToken(toRevoke.record, NOW - 1))
  revoked = toRevoke.value
  expired = (await make('expired', NOW)).value
})

const options = () => ({ tokens: store, now: () => NOW, storeTimeoutMs: 200 })

type Expected = [status: number, code: string, challenge: string | undefined]
const REALM = 'data-api'
const NO_CREDENTIALS: Expected = [401, 'missing_token', 'Bearer realm="data-api"']
const BAD_REQUEST: Expected = [400, 'invalid_request', 'Bearer realm="data-api", error="invalid_request"']
const BAD_TOKEN: Expected = [401, 'invalid_token', 'Bearer realm="data-api", error="invalid_token"']

// Values are functions so they can use the tokens created in beforeAll.
const CASES: [string, () => { authorization: string[]; accessTokenParameter?: boolean }, Expected | 'ok'][] =
  [
    ['no header', () => ({ authorization: [] }), NO_CREDENTIALS],
    ['a Basic header', () => ({ authorization: ['Basic YWxpY2U6c2VjcmV0'] }), NO_CREDENTIALS],
    ['a Digest header', () => ({ authorization: ['Digest username="alice"'] }), NO_CREDENTIALS],
    ['BearerT (the scheme is the whole run)', () => ({ authorization: [`Bearer${good}`] }), NO_CREDENTIALS],
    ['Bearer-like scheme Bearerx', () => ({ authorization: ['Bearerx abc'] }), NO_CREDENTIALS],
    [
      'access_token only, in the query or body',
      () => ({ authorization: [], accessTokenParameter: true }),
      NO_CREDENTIALS,
    ],
    ['an empty value', () => ({ authorization: [''] }), BAD_REQUEST],
    ['Bearer alone', () => ({ authorization: ['Bearer'] }), BAD_REQUEST],
    ['Bearer and a space', () => ({ authorization: ['Bearer '] }), BAD_REQUEST],
    ['a tab separator', () => ({ authorization: [`Bearer\t${good}`] }), BAD_REQUEST],
    ['an NBSP separator', () => ({ authorization: [`Bearer\u00a0${good}`] }), BAD_REQUEST],
    ['two parts after Bearer', () => ({ authorization: [`Bearer ${good} x`] }), BAD_REQUEST],
    ['a quoted token', () => ({ authorization: [`Bearer "${good}"`] }), BAD_REQUEST],
    ['a trailing comma', () => ({ authorization: [`Bearer ${good},`] }), BAD_REQUEST],
    [
      'a comma-joined pair (Hono joins repeated headers)',
      () => ({ authorization: [`Bearer ${good}, Bearer ${good}`] }),
      BAD_REQUEST,
    ],
    ['a non-ASCII character', () => ({ authorization: [`Bearer ${good}é`] }), BAD_REQUEST],
    ['= inside the token', () => ({ authorization: ['Bearer abc=def'] }), BAD_REQUEST],
    ['a leading =', () => ({ authorization: ['Bearer =abc'] }), BAD_REQUEST],
    ['a trailing newline', () => ({ authorization: [`Bearer ${good}\n`] }), BAD_REQUEST],
    ['a leading non-token character', () => ({ authorization: ['=Bearer abc'] }), BAD_REQUEST],
    [
      'two Authorization headers',
      () => ({ authorization: [`Bearer ${good}`, `Bearer ${good}`] }),
      BAD_REQUEST,
    ],
    [
      'a header and access_token',
      () => ({ authorization: [`Bearer ${good}`], accessTokenParameter: true }),
      BAD_REQUEST,
    ],
    ['a well-formed token', () => ({ authorization: [`Bearer ${good}`] }), 'ok'],
    ['lower-case bearer', () => ({ authorization: [`bearer ${good}`] }), 'ok'],
    ['upper-case BEARER and two spaces', () => ({ authorization: [`BEARER  ${good}`] }), 'ok'],
    ['a malformed value (too short)', () => ({ authorization: ['Bearer abc'] }), BAD_TOKEN],
    [
      'a value with padding (longer than the format)',
      () => ({ authorization: [`Bearer ${good}=`] }),
      BAD_TOKEN,
    ],
    ['a flipped checksum character', () => ({ authorization: [`Bearer ${flip(good)}`] }), BAD_TOKEN],
    ['a 10,000-character value', () => ({ authorization: [`Bearer ${'a'.repeat(10_000)}`] }), BAD_TOKEN],
    ['an unknown token', () => ({ authorization: [`Bearer ${unknown}`] }), BAD_TOKEN],
    ['a revoked token', () => ({ authorization: [`Bearer ${revoked}`] }), BAD_TOKEN],
    ['a revoked token with = appended', () => ({ authorization: [`Bearer ${revoked}=`] }), BAD_TOKEN],
    ['a revoked token with , appended', () => ({ authorization: [`Bearer ${revoked},`] }), BAD_REQUEST],
    ['a revoked token with a space appended', () => ({ authorization: [`Bearer ${revoked} `] }), BAD_REQUEST],
    ['a token expired at exactly now', () => ({ authorization: [`Bearer ${expired}`] }), BAD_TOKEN],
  ]

function flip(value: string): string {
  const last = value.at(-1) === 'A' ? 'B' : 'A'
  return value.slice(0, -1) + last
}

describe('authenticateRequest: Authorization inputs (design §4, RFC 6750)', () => {
  test.each(CASES)('%s', async (_name, input, expected) => {
    const result = await authenticateRequest(input(), options())
    if (expected === 'ok') {
      expect(result.ok).toBe(true)
      if (result.ok)
        expect(result.principal).toMatchObject({ kind: 'token', userId: 'alice', tokenKind: 'api' })
      return
    }
    expect(result.ok).toBe(false)
    if (result.ok) return
    const rendered = renderDenial(result.decision, REALM)
    expect([rendered.status, result.decision.code, rendered.headers['www-authenticate']]).toEqual(expected)
    expect(rendered.body).not.toContain(good)
  })
})

describe('format and checksum are checked before any store lookup', () => {
  test('a malformed token never reaches the store', async () => {
    let lookups = 0
    const counting = {
      ...storeMethods(store),
      findByHash: async () => {
        lookups++
        return undefined
      },
    }
    await authenticateRequest({ authorization: ['Bearer abc'] }, { ...options(), tokens: counting })
    await authenticateRequest({ authorization: [`Bearer ${flip(good)}`] }, { ...options(), tokens: counting })
    expect(lookups).toBe(0)
    await authenticateRequest({ authorization: [`Bearer ${unknown}`] }, { ...options(), tokens: counting })
    expect(lookups).toBe(1)
  })
})

describe('fail closed: a store that fails answers 503, never an allow', () => {
  const failing: [string, TokenStore['findByHash']][] = [
    ['rejects', async () => Promise.reject(new Error('connection refused'))],
    [
      'throws synchronously',
      () => {
        throw new Error('boom')
      },
    ],
    ['hangs past the timeout', () => new Promise(() => {})],
    ['answers garbage', async () => ({ hash: 'nope' }) as unknown as TokenRecord],
    [
      'answers a record with another hash',
      async () => (await store.listByOwner('alice')).find((record) => record.hash !== hashOf(good)),
    ],
    [
      'answers a record with broken scopes',
      async () => {
        const record = (await store.findByHash(hashOf(good)))!
        return { ...record, scopes: ['data.everything'] } as unknown as TokenRecord
      },
    ],
  ]
  test.each(failing)('a store that %s → 503', async (_name, findByHash) => {
    const tokens = { ...storeMethods(store), findByHash }
    const result = await authenticateRequest(
      { authorization: [`Bearer ${good}`] },
      { ...options(), tokens, storeTimeoutMs: 50 },
    )
    expect(result).toEqual({
      ok: false,
      decision: expect.objectContaining({ status: 503, code: 'service_unavailable' }),
    })
  })
})

describe('anonymous callers', () => {
  test('are rejected by default and accepted as public-only where the host opts in', async () => {
    expect((await authenticateRequest({ authorization: [] }, options())).ok).toBe(false)
    const result = await authenticateRequest({ authorization: [] }, { ...options(), anonymous: ANONYMOUS })
    expect(result).toEqual({ ok: true, principal: ANONYMOUS })
  })

  test('opting in never admits a bad token', async () => {
    const result = await authenticateRequest(
      { authorization: [`Bearer ${unknown}`] },
      { ...options(), anonymous: ANONYMOUS },
    )
    expect(result.ok).toBe(false)
  })
})

describe('lastUsedAt', () => {
  test('is written in the background, and a failing touch never changes the answer', async () => {
    const tokens = {
      ...storeMethods(store),
      touch: async () => Promise.reject(new Error('read-only replica')),
    }
    const result = await authenticateRequest({ authorization: [`Bearer ${good}`] }, { ...options(), tokens })
    expect(result.ok).toBe(true)
  })

  test('is recorded on the store', async () => {
    await authenticateRequest({ authorization: [`Bearer ${good}`] }, options())
    await new Promise((resolve) => setTimeout(resolve, 5))
    const record = await store.findByHash(hashOf(good))
    expect(record?.lastUsedAt).toBe(NOW)
  })
})

describe('parseBearerHeader and extractBearerToken', () => {
  test('return the token exactly as sent', () => {
    expect(parseBearerHeader('Bearer abc.DEF-_~+/==')).toEqual({ kind: 'token', token: 'abc.DEF-_~+/==' })
    expect(extractBearerToken({ authorization: ['Bearer x'] })).toEqual({ ok: true, token: 'x' })
  })
})

function storeMethods(target: TokenStore): TokenStore {
  return {
    findByHash: (hash) => target.findByHash(hash),
    findById: (id) => target.findById(id),
    save: (record) => target.save(record),
    update: (record) => target.update(record),
    listByOwner: (userId) => target.listByOwner(userId),
    touch: (id, now) => target.touch(id, now),
  }
}

describe('never throws', () => {
  test('a hostile input object is a 503, not an exception', async () => {
    const hostile = {
      get authorization(): string[] {
        throw new Error('getter')
      },
    }
    const result = await authenticateRequest(hostile, { tokens: store, now: () => NOW, storeTimeoutMs: 50 })
    expect(result).toMatchObject({ ok: false, decision: { status: 503 } })
  })
})
