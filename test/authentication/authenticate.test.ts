import fc from 'fast-check'
import { beforeAll, describe, expect, test } from 'vitest'
import { authenticateRequest, extractBearerToken } from '../../src/authentication/authenticate.js'
import { parseBearerHeader } from '../../src/authentication/bearer.js'
import { renderDenial } from '../../src/authentication/http-denial.js'
import { ANONYMOUS } from '../../src/decisions/principal.js'
import { TokenLookupLimitError } from '../../src/errors.js'
import { MemoryTokenStore } from '../../src/tokens/memory-token-store.js'
import { generateTokenValue } from '../../src/tokens/token-format.js'
import { hashTokenValue as hashOf } from '../../src/tokens/token-hash.js'
import {
  createApiToken,
  createOAuthToken,
  revokeToken,
  type TokenRecord,
} from '../../src/tokens/token-record.js'
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
    ['Bearer and two spaces', () => ({ authorization: ['Bearer  '] }), BAD_REQUEST],
    // `/` and `=` end the scheme (they are not tchars) but belong to a b64token: still no SP.
    ['Bearer/ with no space', () => ({ authorization: ['Bearer/abc'] }), BAD_REQUEST],
    ['Bearer= with no space', () => ({ authorization: ['Bearer=='] }), BAD_REQUEST],
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
    // Headers one character away from the canonical `Bearer <token>`, which skips the grammar's scan:
    // each is answered as the full grammar answers it.
    [
      'another scheme, two spaces, then a token',
      () => ({ authorization: [`Basic  ${good}`] }),
      NO_CREDENTIALS,
    ],
    ['Xearer and a space', () => ({ authorization: [`Xearer ${good}`] }), NO_CREDENTIALS],
    // The token alone is a scheme of its own (the whole run of tchars), not a bearer credential.
    ['a bare token, no scheme', () => ({ authorization: [good] }), NO_CREDENTIALS],
    ['Bearer with a tab, then a space', () => ({ authorization: [`Bearer\t ${good}`] }), BAD_REQUEST],
    [
      'two canonical headers',
      () => ({ authorization: [`Bearer ${good}`, `Bearer ${unknown}`] }),
      BAD_REQUEST,
    ],
    [
      'a token with its prefix in capitals',
      () => ({ authorization: [`Bearer ${good.replace('dap_', 'DAP_')}`] }),
      BAD_TOKEN,
    ],
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

describe('a store answer is trusted only when it is the record of the hash looked up', () => {
  // Each case is the real record of `good` with one thing wrong: the rule must catch each alone.
  const base = async () => (await store.findByHash(hashOf(good)))!
  const without = (record: TokenRecord, key: keyof TokenRecord) => {
    const copy: Record<string, unknown> = { ...record }
    delete copy[key]
    return copy
  }
  const garbage: [string, (record: TokenRecord) => unknown][] = [
    ['a record of another kind', (record) => ({ ...record, kind: 'service' })],
    ['a record without a kind', (record) => without(record, 'kind')],
    ['a record without an id', (record) => without(record, 'id')],
    ['a record whose id is a number', (record) => ({ ...record, id: 7 })],
    ['a record without an owner', (record) => without(record, 'userId')],
    ['a record whose owner is a number', (record) => ({ ...record, userId: 7 })],
    ['a record whose scopes are a string', (record) => ({ ...record, scopes: 'public data.data' })],
    ['a record without scopes', (record) => without(record, 'scopes')],
    // A string audience would otherwise be searched as text: `includes` on a string finds substrings.
    [
      'a record whose audience is a string',
      (record) => ({ ...record, audience: 'https://a.example/api/v1 https://b.example/api' }),
    ],
    ['a record of another hash', (record) => ({ ...record, hash: hashOf(unknown) })],
    ['the hash itself (a string)', (record) => record.hash],
    ['a number', () => 42],
    ['null', () => null],
    ['true', () => true],
    // Issue 27: a function is an object to everything but `typeof`; with the record's fields it
    // must still be refused, not taken for the record.
    [
      "a function carrying the record's fields",
      (record) => Object.defineProperties(() => {}, Object.getOwnPropertyDescriptors({ ...record })),
    ],
  ]
  test.each(garbage)('%s → 503, and the host hears why', async (_name, corrupt) => {
    const answer = corrupt(await base())
    const errors: [unknown, string][] = []
    const result = await authenticateRequest(
      { authorization: [`Bearer ${good}`] },
      {
        ...options(),
        tokens: { ...storeMethods(store), findByHash: async () => answer as TokenRecord },
        onError: (error, stage) => errors.push([error, stage]),
      },
    )
    expect(result).toMatchObject({ ok: false, decision: { status: 503, code: 'service_unavailable' } })
    expect(errors).toEqual([
      [
        expect.objectContaining({
          code: 'ERR_TOKEN_STORE',
          message: 'findByHash answered something that is not the record of that hash',
        }),
        'store',
      ],
    ])
  })

  test('"no such token" (undefined) is a 401, not a store failure', async () => {
    const result = await authenticateRequest(
      { authorization: [`Bearer ${good}`] },
      { ...options(), tokens: { ...storeMethods(store), findByHash: async () => undefined } },
    )
    expect(result).toMatchObject({ ok: false, decision: { status: 401, code: 'invalid_token' } })
  })

  test('an API record gives exactly its owner, scopes, id and kind, and no client', async () => {
    const record = await base()
    const result = await authenticateRequest({ authorization: [`Bearer ${good}`] }, options())
    expect(result).toEqual({
      ok: true,
      principal: {
        kind: 'token',
        userId: 'alice',
        scopes: expect.objectContaining({ granted: ['public', 'data.data'] }),
        tokenId: record.id,
        tokenKind: 'api',
      },
    })
    expect(result.ok && Object.hasOwn(result.principal, 'clientId')).toBe(false)
  })

  test('a frozen record that the store answers again gives the very same principal', async () => {
    await base()
    const first = await authenticateRequest({ authorization: [`Bearer ${good}`] }, options())
    const second = await authenticateRequest({ authorization: [`Bearer ${good}`] }, options())
    expect(first.ok && second.ok && first.principal === second.principal).toBe(true)
  })

  test('input that throws while read is a 503 told to onError as the adapter stage', async () => {
    const errors: [unknown, string][] = []
    const hostile = {
      get authorization(): string[] {
        throw new Error('boom')
      },
    }
    const result = await authenticateRequest(hostile, {
      ...options(),
      onError: (error, stage) => errors.push([error, stage]),
    })
    expect(result).toMatchObject({ ok: false, decision: { status: 503 } })
    expect(errors).toEqual([[new Error('boom'), 'adapter']])
  })

  test('an OAuth record gives its client too', async () => {
    const created = createOAuthToken({ userId: 'bob', scopes: 'data.metadata', clientId: 'cli', now: NOW })
    const tokens = { ...storeMethods(store), findByHash: async () => created.record }
    const result = await authenticateRequest(
      { authorization: [`Bearer ${created.value}`] },
      { ...options(), tokens },
    )
    expect(result).toEqual({
      ok: true,
      principal: {
        kind: 'token',
        userId: 'bob',
        scopes: expect.objectContaining({ granted: ['public', 'data.metadata'] }),
        tokenId: created.record.id,
        tokenKind: 'oauth',
        clientId: 'cli',
      },
    })
  })

  test('a record the store changes in place is read afresh on every request', async () => {
    // Only frozen records may share a cached principal: a mutable one can change under it.
    const mutable: { -readonly [K in keyof TokenRecord]: TokenRecord[K] } = { ...(await base()) }
    const tokens = { ...storeMethods(store), findByHash: async () => mutable as TokenRecord }
    const first = await authenticateRequest({ authorization: [`Bearer ${good}`] }, { ...options(), tokens })
    mutable.scopes = ['public']
    const second = await authenticateRequest({ authorization: [`Bearer ${good}`] }, { ...options(), tokens })
    expect(first.ok && first.principal.scopes.granted).toEqual(['public', 'data.data'])
    expect(second.ok && second.principal.scopes.granted).toEqual(['public'])
  })

  test('a synchronous store is answered without a deadline, garbage included', async () => {
    const record = await base()
    const sync = (answer: unknown) => ({
      ...storeMethods(store),
      findByHash: () => answer as TokenRecord,
    })
    const ok = await authenticateRequest(
      { authorization: [`Bearer ${good}`] },
      { ...options(), tokens: sync(record) },
    )
    expect(ok.ok).toBe(true)
    const bad = await authenticateRequest(
      { authorization: [`Bearer ${good}`] },
      { ...options(), tokens: sync({ ...record, kind: 'service' }) },
    )
    expect(bad).toMatchObject({ ok: false, decision: { status: 503 } })
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

describe('lastUsedAt is written at most once per interval', () => {
  // The shared store's record may already carry a use from another test.
  const neverUsed = (found: TokenRecord | undefined): TokenRecord => {
    const { lastUsedAt: _, ...rest } = found!
    return rest
  }
  // [lastUsedAt relative to now, touchIntervalMs option, written?]
  const cases: [string, number | undefined, number | undefined, boolean][] = [
    ['never used', undefined, undefined, true],
    ['used just under a minute ago (the default interval)', -59_999, undefined, false],
    ['used exactly a minute ago', -60_000, undefined, true],
    ['used just now', 0, undefined, false],
    ['used 999 ms ago, a 1 s interval', -999, 1000, false],
    ['used 1 s ago, a 1 s interval', -1000, 1000, true],
    ['used just now, a zero interval', 0, 0, true],
  ]
  test.each(cases)('%s → written: %s', async (_name, lastUsed, touchIntervalMs, written) => {
    const record = neverUsed(await store.findByHash(hashOf(good)))
    const answer = lastUsed === undefined ? record : { ...record, lastUsedAt: NOW + lastUsed }
    const touched: [string, number][] = []
    const tokens = {
      ...storeMethods(store),
      findByHash: async () => answer,
      touch: async (id: string, at: number) => {
        touched.push([id, at])
      },
    }
    const result = await authenticateRequest(
      { authorization: [`Bearer ${good}`] },
      { ...options(), tokens, ...(touchIntervalMs === undefined ? {} : { touchIntervalMs }) },
    )
    expect(result.ok).toBe(true)
    expect(touched).toEqual(written ? [[record.id, NOW]] : [])
  })
})

// A store whose record does not show the last write yet (a replica, a cache): authentication
// remembers per store which touches it asked for, so one instance writes once per interval anyway.
describe('touches asked of one store are remembered per token', () => {
  test('once per interval, again once it has passed or the clock went back; the network beside it', async () => {
    const { lastUsedAt: _, ...record } = (await store.findByHash(hashOf(good)))!
    const touched: unknown[][] = []
    const tokens = {
      ...storeMethods(store),
      findByHash: async () => record as TokenRecord,
      touch: async (...args: unknown[]) => {
        touched.push(args)
      },
    }
    let now = NOW
    const use = async (clientAddress?: string) => {
      const input = clientAddress === undefined ? {} : { clientAddress }
      const answer = await authenticateRequest(
        { authorization: [`Bearer ${good}`], ...input },
        { tokens, now: () => now, storeTimeoutMs: 200, touchIntervalMs: 1000 },
      )
      expect(answer.ok).toBe(true)
    }
    await use('2001:db8:1:2:3:4:5:6')
    await use('2001:db8:1:2:3:4:5:6')
    now = NOW + 999
    await use()
    expect(touched).toEqual([[record.id, NOW, '2001:db8:1:2::/64']])
    now = NOW + 1000
    await use()
    expect(touched.at(-1)).toEqual([record.id, NOW + 1000])
    now = NOW + 500
    await use('192.0.2.7')
    expect(touched.at(-1)).toEqual([record.id, NOW + 500, '192.0.2.7'])
    await use('not an address')
    expect(touched).toHaveLength(3)
    now = NOW + 1500
    await use('not an address')
    expect(touched.at(-1)).toEqual([record.id, NOW + 1500])
  })
})

describe('a failing touch', () => {
  test.each([
    [
      'rejects',
      async () => {
        throw new Error('read-only replica')
      },
    ],
    [
      'throws synchronously',
      () => {
        throw new Error('read-only replica')
      },
    ],
  ])('that %s never changes the answer, and is told to onError as a store failure', async (_name, touch) => {
    const errors: [unknown, string][] = []
    const result = await authenticateRequest(
      { authorization: [`Bearer ${good}`] },
      {
        ...options(),
        tokens: { ...storeMethods(store), touch },
        touchIntervalMs: 0,
        onError: (error, stage) => errors.push([error, stage]),
      },
    )
    expect(result.ok).toBe(true)
    await new Promise((resolve) => setTimeout(resolve, 0))
    expect(errors).toEqual([[new Error('read-only replica'), 'store']])
  })
})

describe('parseBearerHeader and extractBearerToken', () => {
  test('return the token exactly as sent', () => {
    expect(parseBearerHeader('Bearer abc.DEF-_~+/==')).toEqual({ kind: 'token', token: 'abc.DEF-_~+/==' })
    expect(extractBearerToken({ authorization: ['Bearer x'] })).toEqual({ ok: true, token: 'x' })
  })

  // The grammar of RFC 9110 §11.6.2 / RFC 6750 §2.1 written as regular expressions: the oracle.
  function oracle(value: string) {
    const scheme = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+/.exec(value)
    if (scheme === null) return { kind: 'malformed' }
    if (scheme[0].toLowerCase() !== 'bearer') return { kind: 'none' }
    const token = /^ +([A-Za-z0-9\-._~+/]+=*)$/.exec(value.slice(6))
    return token === null ? { kind: 'malformed' } : { kind: 'token', token: token[1] }
  }

  test('agree with the grammar on every header value (property)', () => {
    const piece = fc.constantFrom(
      'a',
      'Z',
      '0',
      '-',
      '.',
      '_',
      '~',
      '+',
      '/',
      '=',
      ' ',
      '\t',
      ',',
      '"',
      'é',
      'İ',
      '\u0000',
    )
    const head = fc.constantFrom(
      '',
      'Bearer',
      'bearer',
      'BEARER',
      'Bearer ',
      'Bearer  ',
      'Basic ',
      'Bearerx ',
      'Bear ',
    )
    fc.assert(
      fc.property(head, fc.array(piece, { maxLength: 12 }), (prefix, rest) => {
        const value = prefix + rest.join('')
        expect(parseBearerHeader(value)).toEqual(oracle(value))
      }),
      { numRuns: 3000 },
    )
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
  test('a header value that is not a string is a malformed header (400), never a lookup', async () => {
    // An object that mimics a string's methods must not pass for a canonical `Bearer <token>`.
    for (const value of [42, {}, { startsWith: () => true, slice: () => good }]) {
      const input = { authorization: [value as unknown as string] }
      const result = await authenticateRequest(input, options())
      expect(result).toMatchObject({ ok: false, decision: { status: 400, code: 'invalid_request' } })
    }
    // null has no length to read: a 503 like any input that throws.
    const result = await authenticateRequest({ authorization: [null as unknown as string] }, options())
    expect(result).toMatchObject({ ok: false, decision: { status: 503 } })
  })
})

describe('a store that looks tokens up by value (findByValue, RFC 7662 stores)', () => {
  const byValue = (answer: (value: string) => unknown) => {
    const seen: string[] = []
    const hashes: string[] = []
    const tokens: TokenStore = {
      ...storeMethods(store),
      findByHash: (hash) => {
        hashes.push(hash)
        return undefined
      },
      findByValue: (value, context) => {
        seen.push(value)
        contexts.push(context)
        return answer(value) as TokenRecord | undefined
      },
    }
    return { tokens, seen, hashes, contexts }
  }
  const contexts: unknown[] = []

  test('is handed the value, never asked by hash, and its record authenticates (sync or async)', async () => {
    const record = (await store.findByHash(hashOf(good)))!
    for (const answer of [() => record, async () => record]) {
      const { tokens, seen, hashes } = byValue(answer)
      const result = await authenticateRequest(
        { authorization: [`Bearer ${good}`] },
        { ...options(), tokens },
      )
      expect(result).toMatchObject({ ok: true, principal: { userId: 'alice', tokenId: record.id } })
      expect(seen).toEqual([good])
      expect(hashes).toEqual([])
    }
  })

  const answers: readonly [string, () => unknown, number][] = [
    ['no record', () => undefined, 401],
    ['a record of another value', async (): Promise<unknown> => store.findByHash(hashOf(revoked)), 503],
    ['a rejection', () => Promise.reject(new Error('issuer down')), 503],
    [
      'a throw',
      () => {
        throw new Error('issuer down')
      },
      503,
    ],
  ]
  test.each(answers)('%s → %i', async (_name, answer, status) => {
    const { tokens } = byValue(answer)
    const result = await authenticateRequest({ authorization: [`Bearer ${good}`] }, { ...options(), tokens })
    expect(result.ok ? 200 : result.decision.status).toBe(status)
  })

  test('is told the client address, when the request has one', async () => {
    const { tokens } = byValue(() => undefined)
    contexts.length = 0
    await authenticateRequest(
      { authorization: [`Bearer ${good}`], clientAddress: '203.0.113.9' },
      { ...options(), tokens },
    )
    await authenticateRequest({ authorization: [`Bearer ${good}`] }, { ...options(), tokens })
    expect(contexts).toEqual([{ clientAddress: '203.0.113.9' }, {}])
  })

  test.each([
    [
      'throws',
      () => {
        throw new TokenLookupLimitError('budget spent', 7)
      },
    ],
    ['rejects', () => Promise.reject(new TokenLookupLimitError('budget spent', 7))],
  ])(
    'a TokenLookupLimitError it %s is 429 rate_limited with Retry-After, not told to onError',
    async (_name, answer) => {
      const { tokens } = byValue(answer)
      const errors: unknown[] = []
      const result = await authenticateRequest(
        { authorization: [`Bearer ${good}`] },
        { ...options(), tokens, onError: (error) => errors.push(error) },
      )
      expect(result).toMatchObject({
        ok: false,
        decision: { status: 429, code: 'rate_limited', retryAfter: 7 },
      })
      expect(errors).toEqual([])
    },
  )

  test('is not asked about a malformed value', async () => {
    const { tokens, seen } = byValue(() => undefined)
    const result = await authenticateRequest({ authorization: ['Bearer dap_nope'] }, { ...options(), tokens })
    expect(result).toMatchObject({ ok: false, decision: { code: 'invalid_token' } })
    expect(seen).toEqual([])
  })
})
