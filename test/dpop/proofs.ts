import { type CryptoKey, exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose'
import { jwkThumbprint } from '../../src/dpop/index.js'
import { accessTokenHash } from '../../src/dpop/jwk-thumbprint.js'

/** A client's DPoP key pair, its public JWK and its thumbprint. */
export interface DpopKey {
  readonly alg: string
  readonly privateKey: CryptoKey
  readonly jwk: JWK
  readonly jkt: string
}

/**
 * A fresh key pair for proofs.
 *
 * @example
 * const key = await dpopKey()
 */
export async function dpopKey(alg = 'ES256'): Promise<DpopKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true })
  const jwk = await exportJWK(publicKey)
  return { alg, privateKey, jwk, jkt: jwkThumbprint(jwk as Record<string, unknown>)! }
}

/**
 * The key of a pair a client library made (oauth4webapi's, openid-client's), for hand-made proofs.
 *
 * @example
 * const key = await dpopKeyOf(await oauth.generateKeyPair('ES256'))
 */
export async function dpopKeyOf(pair: CryptoKeyPair, alg = 'ES256'): Promise<DpopKey> {
  const jwk = await exportJWK(pair.publicKey)
  return { alg, privateKey: pair.privateKey, jwk, jkt: jwkThumbprint(jwk as Record<string, unknown>)! }
}

/** What a proof says: its request, its token, its time; `claims` override any of them. */
export interface ProofFor {
  readonly method: string
  readonly url: string
  readonly token?: string
  /** Epoch seconds; now by default. */
  readonly iat?: number
  readonly nonce?: string
  readonly claims?: Record<string, unknown>
}

/**
 * Signs a DPoP proof (RFC 9449 §4.2) with `key` for a request.
 *
 * @example
 * const proof = await dpopProof(key, { method: 'GET', url: 'https://data.example.org/api/v1/x', token })
 */
export function dpopProof(key: DpopKey, request: ProofFor): Promise<string> {
  const claims: Record<string, unknown> = {
    jti: crypto.randomUUID(),
    htm: request.method,
    htu: request.url,
    iat: request.iat ?? Math.floor(Date.now() / 1000),
    ...(request.token === undefined ? {} : { ath: accessTokenHash(request.token) }),
    ...(request.nonce === undefined ? {} : { nonce: request.nonce }),
    ...request.claims,
  }
  return new SignJWT(claims)
    .setProtectedHeader({ alg: key.alg, typ: 'dpop+jwt', jwk: key.jwk })
    .sign(key.privateKey)
}
