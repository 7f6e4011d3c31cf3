/**
 * A stand-in identity provider for the JWT store's tests: it signs access tokens with keys of each
 * algorithm and serves their JWKS (and discovery metadata) over loopback HTTP, counting fetches; it
 * can rotate keys and misbehave (fail, answer garbage, hang).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { exportJWK, generateKeyPair, type JWK, type JWTPayload, SignJWT } from 'jose'
import { listening } from '../adapters/listen.js'

export type SigningAlgorithm = 'RS256' | 'PS256' | 'ES256' | 'EdDSA'

/** How the JWKS endpoint answers. */
export type JwksMode = 'ok' | 'error' | 'garbage' | 'not-a-jwks' | 'no-signing-key' | 'hang'

interface SigningKey {
  readonly alg: SigningAlgorithm
  readonly kid: string
  readonly privateKey: CryptoKey
  readonly publicJwk: JWK
}

export interface SignOptions {
  readonly alg?: SigningAlgorithm
  /** A kid to put in the header instead of the key's own. */
  readonly kid?: string
  readonly typ?: string
}

async function signingKey(alg: SigningAlgorithm, kid: string): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true })
  return { alg, kid, privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' } }
}

let generation = 0

/**
 * Starts a stand-in IdP on 127.0.0.1 with one key of each algorithm.
 *
 * @example
 * const idp = await startStandInIdp()
 * const token = await idp.sign({ sub: 'alice', scope: 'data.data', aud: RESOURCE })
 */
export async function startStandInIdp() {
  const keys = new Map<SigningAlgorithm, SigningKey>()
  for (const alg of ['RS256', 'PS256', 'ES256', 'EdDSA'] as const) {
    keys.set(alg, await signingKey(alg, `${alg.toLowerCase()}-${++generation}`))
  }
  let mode: JwksMode = 'ok'
  let jwksFetches = 0
  let discoveryFetches = 0
  const hanging: ServerResponse[] = []
  let origin = ''
  const jwks = () => ({ keys: [...keys.values()].map((key) => key.publicJwk) })
  const send = (res: ServerResponse, status: number, body: string) => {
    res.writeHead(status, { 'content-type': 'application/json' }).end(body)
  }
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (req.url === '/.well-known/openid-configuration') {
      discoveryFetches++
      return send(res, 200, JSON.stringify({ issuer: origin, jwks_uri: `${origin}/jwks` }))
    }
    if (req.url !== '/jwks') return send(res, 404, '{}')
    jwksFetches++
    switch (mode) {
      case 'ok':
        return send(res, 200, JSON.stringify(jwks()))
      case 'error':
        return send(res, 503, '{}')
      case 'garbage':
        return send(res, 200, '<html>maintenance</html>')
      case 'not-a-jwks':
        return send(res, 200, JSON.stringify({ keys: 'none' }))
      case 'no-signing-key':
        return send(res, 200, JSON.stringify({ keys: [{ kty: 'oct', k: 'c2VjcmV0' }] }))
      case 'hang':
        hanging.push(res)
    }
  })
  const { port, close } = await listening(server.listen(0, '127.0.0.1'))
  origin = `http://127.0.0.1:${port}`
  return {
    issuer: origin,
    jwksUri: `${origin}/jwks`,
    jwksFetches: () => jwksFetches,
    discoveryFetches: () => discoveryFetches,
    setMode: (next: JwksMode) => {
      mode = next
    },
    publicJwk: (alg: SigningAlgorithm) => keys.get(alg)!.publicJwk,
    /** Replaces the key of `alg` with a new one (new kid); the old one leaves the JWKS. */
    rotate: async (alg: SigningAlgorithm) => {
      keys.set(alg, await signingKey(alg, `${alg.toLowerCase()}-${++generation}`))
    },
    /** A token signed with the current key of `options.alg` (RS256 by default), `iss` this issuer. */
    sign: async (claims: JWTPayload, options: SignOptions = {}) => {
      const key = keys.get(options.alg ?? 'RS256')!
      return new SignJWT({ iss: origin, ...claims })
        .setProtectedHeader({
          alg: key.alg,
          kid: options.kid ?? key.kid,
          ...(options.typ && { typ: options.typ }),
        })
        .sign(key.privateKey)
    },
    close: async () => {
      for (const res of hanging) res.destroy()
      await close()
    },
  }
}

export type StandInIdp = Awaited<ReturnType<typeof startStandInIdp>>
