// What a DPoP proof costs at the guard: `policy.authenticate` of a bound token with its proof (the
// token lookup, the proof's signature, claims, `ath`, thumbprint and replay cache) beside jose's
// `jwtVerify` with `EmbeddedJWK` alone on the same proofs: the floor no verifier can go under.

import { hash } from 'node:crypto'
import { createAccessPolicy, MemoryTokenStore } from 'data-access-policy'
import { jwkThumbprint } from 'data-access-policy/dpop'
import { createOAuthToken } from 'data-access-policy/oauth'
import { EmbeddedJWK, exportJWK, generateKeyPair, jwtVerify, SignJWT } from 'jose'
import { compareAsync, type Measurement } from './harness.js'

const RESOURCE = 'https://data.example.org/api/v1'
const PATH = '/api/v1/datasets/acme/open'

/** Options of {@link benchDpop}: its rounds and operations per round. */
export interface DpopBenchOptions {
  readonly iterations: number
  readonly rounds: number
}

/**
 * The DPoP rows: each proof is used once (the replay cache would refuse it again), so every
 * operation of both candidates gets a proof of its own, signed before the clock starts; both
 * candidates walk the same list.
 */
export async function benchDpop(
  options: DpopBenchOptions = { iterations: 1000, rounds: 15 },
): Promise<Measurement[]> {
  const { privateKey, publicKey } = await generateKeyPair('ES256')
  const jwk = await exportJWK(publicKey)
  const tokens = new MemoryTokenStore()
  const { record, value } = createOAuthToken({
    userId: 'alice',
    scopes: 'data.data',
    dpopJkt: jwkThumbprint(jwk as Record<string, unknown>)!,
    now: Date.now(),
  })
  await tokens.save(record)
  const policy = createAccessPolicy({ tokens, resource: RESOURCE })
  // compareAsync's warm-up runs min(iterations, 5000) operations, then `rounds` rounds of `iterations`.
  const count = Math.min(options.iterations, 5000) + options.rounds * options.iterations
  const ath = hash('sha256', value, 'base64url')
  const proofs: string[] = []
  for (let i = 0; i < count; i++) {
    proofs.push(
      await new SignJWT({
        jti: `${i}-${crypto.randomUUID()}`,
        htm: 'GET',
        htu: `https://data.example.org${PATH}`,
        iat: Math.floor(Date.now() / 1000),
        ath,
      })
        .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk })
        .sign(privateKey),
    )
  }
  const authorization = [`DPoP ${value}`]
  let policyNext = 0
  let joseNext = 0
  return compareAsync(
    [
      {
        name: "jose `jwtVerify` with `EmbeddedJWK` alone (typ, alg: the proof's signature floor)",
        run: async () => {
          const verified = await jwtVerify(proofs[joseNext++]!, EmbeddedJWK, {
            typ: 'dpop+jwt',
            algorithms: ['ES256'],
          })
          return verified.payload.htm === 'GET'
        },
      },
      {
        name: 'data-access-policy: `policy.authenticate` of a DPoP-bound token with its proof',
        run: async () => {
          const result = await policy.authenticate({
            authorization,
            dpop: [proofs[policyNext++]!],
            method: 'GET',
            target: PATH,
            protocol: 'https',
            clientAddress: '10.0.0.1',
          })
          if (!result.ok) throw new Error(`the bench's proof was refused: ${result.decision.description}`)
          return result.ok
        },
      },
    ],
    options,
  )
}
