/**
 * The JWKS's rarer shapes, served by a stub fetch: several keys that fit a token without `kid`,
 * a key the runtime cannot import, an answer that is JSON but no object.
 */
import { exportJWK, generateKeyPair, SignJWT } from 'jose'
import { describe, expect, test } from 'vitest'
import { TokenStoreError } from '../../src/errors.js'
import { JwtTokenStore } from '../../src/jwt/index.js'

const NOW = Date.parse('2026-11-26T12:00:00Z')
const ISSUER = 'https://idp.example/'
const CLAIMS = { iss: ISSUER, sub: 'alice', aud: 'https://data.example.org/api', exp: NOW / 1000 + 600 }

function storeServing(body: unknown) {
  return new JwtTokenStore({
    issuer: ISSUER,
    jwksUri: 'https://idp.example/jwks',
    algorithms: ['RS256'],
    now: () => NOW,
    fetch: (async () => Response.json(body)) as unknown as typeof fetch,
  })
}

describe('JWKS shapes', () => {
  test('several keys fit a token without kid: each is tried', async () => {
    const one = await generateKeyPair('RS256', { extractable: true })
    const two = await generateKeyPair('RS256', { extractable: true })
    const stranger = await generateKeyPair('RS256')
    const tokens = storeServing({ keys: [await exportJWK(one.publicKey), await exportJWK(two.publicKey)] })
    const token = await new SignJWT(CLAIMS).setProtectedHeader({ alg: 'RS256' }).sign(two.privateKey)
    expect((await tokens.findByValue(token))?.userId).toBe('alice')
    const forged = await new SignJWT(CLAIMS).setProtectedHeader({ alg: 'RS256' }).sign(stranger.privateKey)
    expect(await tokens.findByValue(forged)).toBeUndefined()
    const expired = await new SignJWT({ ...CLAIMS, exp: NOW / 1000 - 600 })
      .setProtectedHeader({ alg: 'RS256' })
      .sign(two.privateKey)
    expect(await tokens.findByValue(expired)).toBeUndefined()
  })

  test('an answer that is JSON but not an object: 503', async () => {
    const pair = await generateKeyPair('RS256')
    const token = await new SignJWT(CLAIMS).setProtectedHeader({ alg: 'RS256' }).sign(pair.privateKey)
    await expect(storeServing(null).findByValue(token)).rejects.toThrow(/not a JSON object/)
  })

  test('a failure that is neither the token nor the JWKS is a TokenStoreError (503)', async () => {
    const pair = await generateKeyPair('RS256')
    const token = await new SignJWT(CLAIMS).setProtectedHeader({ alg: 'RS256' }).sign(pair.privateKey)
    const tokens = new JwtTokenStore({
      issuer: ISSUER,
      jwksUri: 'https://idp.example/jwks',
      algorithms: ['RS256'],
      now: () => NOW,
      fetch: (async () => ({
        status: 200,
        json: () => ({ keys: [{ kty: 'RSA' }] }),
      })) as unknown as typeof fetch,
    })
    const lookup = tokens.findByValue(token)
    await expect(lookup).rejects.toBeInstanceOf(TokenStoreError)
  })

  test('discovery where neither metadata document answers: 503', async () => {
    const pair = await generateKeyPair('RS256')
    const token = await new SignJWT(CLAIMS).setProtectedHeader({ alg: 'RS256' }).sign(pair.privateKey)
    const tokens = new JwtTokenStore({
      issuer: ISSUER,
      algorithms: ['RS256'],
      now: () => NOW,
      fetch: (async () => new Response('{}', { status: 404 })) as unknown as typeof fetch,
    })
    await expect(tokens.findByValue(token)).rejects.toThrow('the issuer metadata answered 404')
  })
})
