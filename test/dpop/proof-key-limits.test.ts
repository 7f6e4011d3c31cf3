import { exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose'
import { beforeAll, describe, expect, test } from 'vitest'
import { DpopProofError, verifyDpopProof } from '../../src/dpop/index.js'

// A proof's key is the client's choice: an RSA key whose verification is expensive, or a header
// key of absurd shape, is refused before any signature is checked.

const URL_ = 'https://api.example.com/oauth/token'
const REQUEST = { method: 'POST', url: URL_ }
const NOW = 1_800_000_000_000

let rsa: { readonly privateKey: CryptoKey; readonly jwk: JWK }
let ec: { readonly privateKey: CryptoKey; readonly jwk: JWK }
beforeAll(async () => {
  const rsaPair = await generateKeyPair('RS256', { extractable: true })
  rsa = { privateKey: rsaPair.privateKey, jwk: await exportJWK(rsaPair.publicKey) }
  const ecPair = await generateKeyPair('ES256', { extractable: true })
  ec = { privateKey: ecPair.privateKey, jwk: await exportJWK(ecPair.publicKey) }
})

// Signed by the real key, with the header's jwk changed: only a check made before the signature's
// could name the key as the reason.
function proofWith(key: { readonly privateKey: CryptoKey }, alg: string, jwk: unknown): Promise<string> {
  return new SignJWT({ jti: crypto.randomUUID(), htm: 'POST', htu: URL_, iat: NOW / 1000 })
    .setProtectedHeader({ alg, typ: 'dpop+jwt', jwk: jwk as JWK })
    .sign(key.privateKey)
}

async function reasonOf(proof: Promise<string>): Promise<string> {
  const error = await verifyDpopProof(await proof, REQUEST, { now: NOW }).then(
    () => undefined,
    (thrown: unknown) => thrown,
  )
  if (!(error instanceof DpopProofError)) throw new Error(`expected a DpopProofError, got ${String(error)}`)
  expect(error.error).toBe('invalid_dpop_proof')
  return error.message
}

describe('proof keys refused before any crypto', () => {
  test.each([
    {
      name: 'an RSA exponent of 3',
      proof: () => proofWith(rsa, 'RS256', { ...rsa.jwk, e: 'Aw' }),
      reason: `the proof's RSA key has the exponent "Aw", expected "AQAB" (65537)`,
    },
    {
      name: 'an RSA exponent of 2^32 + 1',
      proof: () => proofWith(rsa, 'RS256', { ...rsa.jwk, e: 'AQAAAAE' }),
      reason: 'expected "AQAB" (65537)',
    },
    {
      name: 'an RSA key without an exponent',
      proof: () => proofWith(rsa, 'RS256', { kty: 'RSA', n: rsa.jwk.n }),
      reason: 'the exponent undefined',
    },
    {
      name: 'an RSA modulus over 4096 bits (684 characters)',
      proof: () => proofWith(rsa, 'RS256', { ...rsa.jwk, n: 'x'.repeat(684) }),
      reason: `the proof's RSA modulus is 684 base64url characters, expected at most 683 (4096 bits)`,
    },
    {
      name: 'an RSA-16384 modulus',
      proof: () => proofWith(rsa, 'RS256', { ...rsa.jwk, n: 'x'.repeat(2731) }),
      reason: 'modulus is 2731 base64url characters',
    },
    {
      name: 'a jwk of 11 members',
      proof: () =>
        proofWith(ec, 'ES256', {
          ...ec.jwk,
          ...Object.fromEntries(Array.from({ length: 7 }, (_, i) => [`m${i}`, 1])),
        }),
      reason: `the proof's jwk has 11 members, expected at most 10`,
    },
    {
      name: 'a jwk of 2 KiB',
      proof: () => proofWith(ec, 'ES256', { ...ec.jwk, kid: 'k'.repeat(2048) }),
      reason: /^the proof's jwk is \d+ characters of JSON, expected at most 1024$/,
    },
  ])('$name', async ({ proof, reason }) => {
    const message = await reasonOf(proof())
    if (typeof reason === 'string') expect(message).toContain(reason)
    else expect(message).toMatch(reason)
  })
})

describe('proof keys left to the verifier', () => {
  test.each([
    { name: 'an RSA-2048 key', key: () => rsa, alg: 'RS256' },
    { name: 'an EC key with a kid, alg, use and key_ops', key: () => ec, alg: 'ES256', extra: true },
  ])('$name is accepted', async ({ key, alg, extra }) => {
    const jwk = { ...key().jwk, ...(extra && { kid: 'k1', alg, use: 'sig', key_ops: ['verify'] }) }
    await expect(
      verifyDpopProof(await proofWith(key(), alg, jwk), REQUEST, { now: NOW }),
    ).resolves.toBeDefined()
  })

  test('an RSA-4096 key, whose modulus is 683 characters, is accepted', async () => {
    const pair = await generateKeyPair('PS256', { extractable: true, modulusLength: 4096 })
    const jwk = await exportJWK(pair.publicKey)
    expect(jwk.n).toHaveLength(683)
    await expect(
      verifyDpopProof(await proofWith(pair, 'PS256', jwk), REQUEST, { now: NOW }),
    ).resolves.toBeDefined()
  }, 60_000)

  test.each([
    { name: 'a header that does not decode', proof: async () => 'not.a.jwt', reason: /not a valid DPoP JWT/ },
    { name: 'no jwk', proof: () => proofWith(ec, 'ES256', undefined), reason: /not a valid DPoP JWT/ },
    {
      name: 'a jwk that is a string',
      proof: () => proofWith(ec, 'ES256', 'key'),
      reason: /not a valid DPoP JWT/,
    },
    {
      name: 'a jwk that is an array',
      proof: () => proofWith(ec, 'ES256', [ec.jwk]),
      reason: /not a valid DPoP JWT/,
    },
  ])('$name is refused by the verifier', async ({ proof, reason }) => {
    expect(await reasonOf(proof())).toMatch(reason)
  })
})
