import { type CryptoKey, exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose'
import { beforeAll, describe, expect, test } from 'vitest'
import {
  DPOP_PROOF_LEEWAY_SECONDS,
  DPOP_PROOF_MAX_AGE_SECONDS,
  DpopProofError,
  jwkThumbprint,
  MemoryDpopReplayCache,
  verifyDpopProof,
} from '../../src/dpop/index.js'
import { accessTokenHash } from '../../src/dpop/jwk-thumbprint.js'
import { TokenStoreError } from '../../src/errors.js'

const URL_ = 'https://api.example.com/api/v1/datasets'
const NOW = 1_800_000_000_000
const TOKEN = 'dao_token-value'

interface Signer {
  readonly alg: string
  readonly privateKey: CryptoKey
  readonly jwk: JWK
  readonly jkt: string
}

async function signer(alg: string, options: Parameters<typeof generateKeyPair>[1] = {}): Promise<Signer> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true, ...options })
  const jwk = await exportJWK(publicKey)
  return { alg, privateKey, jwk, jkt: jwkThumbprint(jwk as Record<string, unknown>)! }
}

interface ProofShape {
  readonly header?: Record<string, unknown>
  readonly claims?: Record<string, unknown>
  readonly omit?: readonly string[]
}

function proof(key: Signer, shape: ProofShape = {}): Promise<string> {
  const claims: Record<string, unknown> = {
    jti: crypto.randomUUID(),
    htm: 'GET',
    htu: URL_,
    iat: NOW / 1000,
    ath: accessTokenHash(TOKEN),
    ...shape.claims,
  }
  for (const name of shape.omit ?? []) delete claims[name]
  return new SignJWT(claims)
    .setProtectedHeader({ alg: key.alg, typ: 'dpop+jwt', jwk: key.jwk, ...shape.header })
    .sign(key.privateKey)
}

const AT_RESOURCE = { method: 'GET', url: `${URL_}?limit=5#x`, accessToken: TOKEN }

let es256: Signer
let other: Signer
beforeAll(async () => {
  es256 = await signer('ES256')
  other = await signer('ES256')
})

describe('verifyDpopProof accepts', () => {
  test.each(['ES256', 'EdDSA', 'RS256', 'PS256'])(
    'a proof signed with %s, and names its key',
    async (alg) => {
      const key = await signer(alg)
      const verified = await verifyDpopProof(await proof(key), { ...AT_RESOURCE, jkt: key.jkt }, { now: NOW })
      expect(verified).toMatchObject({ jkt: key.jkt, iat: NOW / 1000 })
      expect(verified.jkt).toMatch(/^[A-Za-z0-9_-]{43}$/)
    },
  )

  test('an htu that differs only in case of scheme and host, default port, query or fragment', async () => {
    const value = await proof(es256, { claims: { htu: 'HTTPS://API.Example.com:443/api/v1/datasets?a=1' } })
    await expect(verifyDpopProof(value, AT_RESOURCE, { now: NOW })).resolves.toMatchObject({ jkt: es256.jkt })
  })

  test('a proof at the token endpoint, with no access token to hash', async () => {
    const value = await proof(es256, {
      claims: { htm: 'POST', htu: 'https://api.example.com/oauth/token' },
      omit: ['ath'],
    })
    await expect(
      verifyDpopProof(value, { method: 'POST', url: 'https://api.example.com/oauth/token' }, { now: NOW }),
    ).resolves.toMatchObject({ jkt: es256.jkt })
  })

  test('an iat at the edges of the window', async () => {
    for (const iat of [NOW / 1000 - DPOP_PROOF_MAX_AGE_SECONDS, NOW / 1000 + DPOP_PROOF_LEEWAY_SECONDS]) {
      await expect(
        verifyDpopProof(await proof(es256, { claims: { iat } }), AT_RESOURCE, { now: NOW }),
      ).resolves.toBeDefined()
    }
  })
})

async function refusal(
  value: string | Promise<string>,
  request = AT_RESOURCE,
  options = {},
): Promise<DpopProofError> {
  const error = await verifyDpopProof(await value, request, { now: NOW, ...options }).then(
    () => undefined,
    (thrown: unknown) => thrown,
  )
  expect(error).toBeInstanceOf(DpopProofError)
  return error as DpopProofError
}

describe('verifyDpopProof refuses, as invalid_dpop_proof', () => {
  const cases: readonly [string, () => Promise<string>, RegExp][] = [
    ['no proof', async () => '', /no DPoP proof/],
    ['a proof of 8 KiB and more', async () => 'a'.repeat(8193), /longer than 8192/],
    ['not a JWT', async () => 'not.a.jwt', /not a valid DPoP JWT/],
    ['another typ', () => proof(es256, { header: { typ: 'JWT' } }), /typ/],
    ['no jwk in the header', () => proof(es256, { header: { jwk: undefined } }), /jwk/],
    [
      'a jwk of another key than the signature',
      () => proof(es256, { header: { jwk: other.jwk } }),
      /signature/,
    ],
    [
      'a private key in the header',
      async () => {
        const { privateKey } = await generateKeyPair('ES256', { extractable: true })
        return proof(es256, { header: { jwk: await exportJWK(privateKey) } })
      },
      /public key/,
    ],
    [
      'a jwk that is no key',
      () => proof(es256, { header: { jwk: { kty: 'EC', crv: 'P-256', x: 'AAAA', y: 'AAAA' } } }),
      /not a valid DPoP JWT/,
    ],
    [
      'an htu with credentials',
      () => proof(es256, { claims: { htu: 'https://u:p@api.example.com/api/v1/datasets' } }),
      /htu/,
    ],
    ['no jti', () => proof(es256, { omit: ['jti'] }), /jti/],
    ['an empty jti', () => proof(es256, { claims: { jti: '' } }), /jti/],
    ['a jti of 257 characters', () => proof(es256, { claims: { jti: 'j'.repeat(257) } }), /jti/],
    ['no htm', () => proof(es256, { omit: ['htm'] }), /htm/],
    ['another method', () => proof(es256, { claims: { htm: 'POST' } }), /htm is "POST", expected "GET"/],
    ['a method in another case', () => proof(es256, { claims: { htm: 'get' } }), /htm/],
    ['no htu', () => proof(es256, { omit: ['htu'] }), /htu/],
    ['another path', () => proof(es256, { claims: { htu: 'https://api.example.com/api/v1/tokens' } }), /htu/],
    [
      'another host',
      () => proof(es256, { claims: { htu: 'https://evil.example.com/api/v1/datasets' } }),
      /htu/,
    ],
    [
      'another scheme',
      () => proof(es256, { claims: { htu: 'http://api.example.com/api/v1/datasets' } }),
      /htu/,
    ],
    [
      'another port',
      () => proof(es256, { claims: { htu: 'https://api.example.com:8443/api/v1/datasets' } }),
      /htu/,
    ],
    ['an htu that is not a URL', () => proof(es256, { claims: { htu: '/api/v1/datasets' } }), /htu/],
    ['an htu that is not a string', () => proof(es256, { claims: { htu: 7 } }), /htu/],
    ['no iat', () => proof(es256, { omit: ['iat'] }), /iat/],
    [
      'a stale iat',
      () => proof(es256, { claims: { iat: NOW / 1000 - DPOP_PROOF_MAX_AGE_SECONDS - 1 } }),
      /in the past/,
    ],
    [
      'an iat too far ahead',
      () => proof(es256, { claims: { iat: NOW / 1000 + DPOP_PROOF_LEEWAY_SECONDS + 1 } }),
      /in the future/,
    ],
    ['no ath with a token', () => proof(es256, { omit: ['ath'] }), /ath/],
    [
      'the ath of another token',
      () => proof(es256, { claims: { ath: accessTokenHash('dao_other') } }),
      /ath/,
    ],
  ]
  test.each(cases)('%s', async (_name, make, reason) => {
    const error = await refusal(make())
    expect(error.error).toBe('invalid_dpop_proof')
    expect(error.code).toBe('ERR_DPOP_PROOF')
    expect(error.message).toMatch(reason)
  })

  test('a proof by another key than the token is bound to', async () => {
    const error = await refusal(proof(es256), { ...AT_RESOURCE, jkt: other.jkt } as typeof AT_RESOURCE)
    expect(error.message).toMatch(/another key/)
  })

  test('an algorithm outside the allowed list, and HMAC or none whatever the list says', async () => {
    const ps = await signer('PS256')
    expect((await refusal(proof(ps), AT_RESOURCE, { algorithms: ['ES256'] })).message).toMatch(/not allowed/)
    const secret = new TextEncoder().encode('a shared secret of thirty-two bytes!')
    const hmac = new SignJWT({
      jti: 'x',
      htm: 'GET',
      htu: URL_,
      iat: NOW / 1000,
      ath: accessTokenHash(TOKEN),
    })
      .setProtectedHeader({ alg: 'HS256', typ: 'dpop+jwt', jwk: es256.jwk })
      .sign(secret)
    expect((await refusal(hmac, AT_RESOURCE, { algorithms: ['HS256', 'ES256'] })).message).toMatch(
      /not allowed/,
    )
  })

  test('a request URL that is not absolute http(s)', async () => {
    const error = await refusal(proof(es256), { ...AT_RESOURCE, url: 'ftp://api.example.com/x' })
    expect(error.message).toMatch(/not an absolute http\(s\) URL/)
  })
})

describe('server nonces', () => {
  const acceptNonce = (nonce: string | undefined) => nonce === 'n-1'

  test('a proof with the current nonce passes, one without or with an old one is use_dpop_nonce', async () => {
    await expect(
      verifyDpopProof(await proof(es256, { claims: { nonce: 'n-1' } }), AT_RESOURCE, {
        now: NOW,
        acceptNonce,
      }),
    ).resolves.toBeDefined()
    for (const claims of [{}, { nonce: 'n-0' }, { nonce: 7 }]) {
      const error = await refusal(proof(es256, { claims }), AT_RESOURCE, { acceptNonce })
      expect(error.error).toBe('use_dpop_nonce')
    }
  })
})

describe('replays', () => {
  test('a proof is accepted once per key, and its jti is remembered for the window', async () => {
    let now = NOW
    const replayCache = new MemoryDpopReplayCache({ now: () => now })
    const value = await proof(es256, { claims: { jti: 'same' } })
    await verifyDpopProof(value, AT_RESOURCE, { now, replayCache })
    expect((await refusal(value, AT_RESOURCE, { replayCache })).message).toMatch(/used before/)
    // The same jti from another key is another proof.
    await verifyDpopProof(await proof(other, { claims: { jti: 'same' } }), AT_RESOURCE, { now, replayCache })
    now = NOW + (DPOP_PROOF_MAX_AGE_SECONDS + 1) * 1000
    // Past the window the iat check refuses the proof before the cache is asked.
    expect((await refusal(value, AT_RESOURCE, { replayCache, now })).message).toMatch(/in the past/)
  })

  test.each([
    { name: 'the default window', options: {}, seconds: 300 + 30 + 60 },
    {
      name: 'a window of 60 s without leeway',
      options: { maxAgeSeconds: 60, leewaySeconds: 0 },
      seconds: 120,
    },
    {
      name: 'an hour and 5 minutes of leeway',
      options: { maxAgeSeconds: 3600, leewaySeconds: 300 },
      seconds: 3960,
    },
  ])('with $name, a proof is remembered past its window by the leeway and a minute of skew', async (row) => {
    const claims: [string, number][] = []
    const replayCache = { claim: (key: string, expiresAt: number) => claims.push([key, expiresAt]) > 0 }
    const iat = NOW / 1000 - 10
    await verifyDpopProof(await proof(es256, { claims: { jti: 'j', iat } }), AT_RESOURCE, {
      now: NOW,
      replayCache,
      ...row.options,
    })
    expect(claims).toEqual([[`${es256.jkt}.j`, (iat + row.seconds) * 1000]])
  })

  test("a failing cache's error is thrown as it is, for a 503", async () => {
    const failure = new TokenStoreError('down')
    const replayCache = { claim: () => Promise.reject(failure) }
    await expect(verifyDpopProof(await proof(es256), AT_RESOURCE, { now: NOW, replayCache })).rejects.toBe(
      failure,
    )
  })
})
