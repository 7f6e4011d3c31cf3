// The JWT store's verification beside jose's `jwtVerify` alone on the same tokens, in one run: what
// the store adds (the token's shape, its SHA-256, the claims to a record) to the signature and
// claims checks both make. The store's cache of verified tokens is off, so that both verify every
// time; a cached row shows what a repeated token costs.

import { JwtTokenStore } from 'data-access-policy/jwt'
import { createLocalJWKSet, exportJWK, generateKeyPair, SignJWT } from 'jose'
import { compareAsync, type Measurement } from './harness.js'

const ISSUER = 'https://idp.example/'
const RESOURCE = 'https://data.example.org/api'

/** jose alone, the store uncached and the store cached, on 100 distinct RS256 tokens. */
export async function benchJwt(): Promise<Measurement[]> {
  const { privateKey, publicKey } = await generateKeyPair('RS256')
  const jwks = { keys: [{ ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' }] }
  const exp = Math.floor(Date.now() / 1000) + 86_400
  const tokens: string[] = []
  for (let i = 0; i < 100; i++) {
    tokens.push(
      await new SignJWT({
        sub: `user${i}`,
        aud: RESOURCE,
        scope: 'openid data.metadata',
        client_id: 'cli',
        jti: `t${i}`,
      })
        .setProtectedHeader({ alg: 'RS256', kid: 'k1', typ: 'at+jwt' })
        .setIssuer(ISSUER)
        .setIssuedAt()
        .setExpirationTime(exp)
        .sign(privateKey),
    )
  }
  const fetch = (async () => Response.json(jwks)) as unknown as typeof globalThis.fetch
  const options = { issuer: ISSUER, jwksUri: `${ISSUER}jwks`, algorithms: ['RS256'] as const, fetch }
  const uncached = new JwtTokenStore({ ...options, cacheTtlMs: 0 })
  const cached = new JwtTokenStore(options)
  const keys = createLocalJWKSet(jwks)
  const { jwtVerify } = await import('jose')
  const n = tokens.length
  // Both fetch their keys once before the rounds.
  await uncached.findByValue(tokens[0]!)
  return compareAsync(
    [
      {
        name: 'jose `jwtVerify` alone (RS256, the same checks: issuer, audience, algorithm, exp)',
        run: async (i) =>
          (
            await jwtVerify(tokens[i % n]!, keys, {
              issuer: ISSUER,
              audience: RESOURCE,
              algorithms: ['RS256'],
              requiredClaims: ['exp', 'sub'],
            })
          ).payload.sub !== undefined,
      },
      {
        name: 'data-access-policy: `JwtTokenStore.findByValue`, uncached (`cacheTtlMs: 0`)',
        run: async (i) => (await uncached.findByValue(tokens[i % n]!)) !== undefined,
      },
      {
        name: 'data-access-policy: `JwtTokenStore.findByValue`, a token verified before (cached)',
        run: async (i) => (await cached.findByValue(tokens[i % n]!)) !== undefined,
      },
    ],
    { iterations: 2_000, rounds: 15 },
  )
}
