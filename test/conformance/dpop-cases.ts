/**
 * The DPoP rows of the conformance table (RFC 9449 §7.1): a token bound to a key, sent every way a
 * client may get wrong, and the exact answer every framework must give. A proof is used once, so
 * each row makes fresh headers for each request it sends.
 */
import { accessTokenHash } from '../../src/dpop/jwk-thumbprint.js'
import { type DpopKey, dpopProof, type ProofFor } from '../dpop/proofs.js'
import type { Expected } from './cases.js'
import { CONFORMANCE_PUBLIC_URL } from './servers.js'

/** The tokens and keys the rows use: saved in every server's store before the rows run. */
export interface DpopFixture {
  readonly key: DpopKey
  readonly otherKey: DpopKey
  /** An OAuth token of `u` bound to `key`. */
  readonly bound: string
  /** An OAuth token of `u`, not bound. */
  readonly unbound: string
}

/** One row: the headers it sends (made afresh per request) and the answer. */
export interface DpopCase {
  readonly name: string
  readonly headers: (fixture: DpopFixture) => Promise<Record<string, string | readonly string[]>>
  readonly expect: Expected
}

/** The route every row asks: a dataset overview `u` may read. */
export const DPOP_PATH = '/api/v1/datasets/owner/o-open'
const URL_ = `${CONFORMANCE_PUBLIC_URL}${DPOP_PATH}`
const ALGS = 'algs="ES256 EdDSA Ed25519 RS256 PS256"'
const METADATA = `resource_metadata="${CONFORMANCE_PUBLIC_URL}/.well-known/oauth-protected-resource/api/v1"`

const challenge = (code: string, description: string) =>
  `DPoP realm="data-api", error="${code}", error_description="${description}", ${ALGS}, scope="data.overview", ${METADATA}`
const refused = (code: string, description: string): Expected => ({
  status: 401,
  body: { error: { status: 401, message: 'Invalid credentials', code } },
  wwwAuthenticate: challenge(code, description),
})

function proof(fixture: DpopFixture, over: Partial<ProofFor> = {}, key = fixture.key): Promise<string> {
  return dpopProof(key, { method: 'GET', url: URL_, token: fixture.bound, ...over })
}

async function dpop(fixture: DpopFixture, over: Partial<ProofFor> = {}, key?: DpopKey) {
  return { authorization: `DPoP ${fixture.bound}`, dpop: await proof(fixture, over, key) }
}

export const DPOP_CASES: readonly DpopCase[] = [
  {
    name: 'DPoP: a fresh proof by the bound key',
    headers: (f) => dpop(f),
    expect: { status: 200, body: undefined },
  },
  {
    name: 'DPoP: the bound token as Bearer',
    headers: async (f) => ({ authorization: `Bearer ${f.bound}` }),
    expect: refused(
      'invalid_token',
      'the token is bound to a DPoP key: send it with the DPoP scheme and a proof',
    ),
  },
  {
    name: 'DPoP: no proof',
    headers: async (f) => ({ authorization: `DPoP ${f.bound}` }),
    expect: refused('invalid_token', 'the DPoP-bound token came without a DPoP proof'),
  },
  {
    name: 'DPoP: two proofs',
    headers: async (f) => ({ authorization: `DPoP ${f.bound}`, dpop: [await proof(f), await proof(f)] }),
    expect: refused('invalid_dpop_proof', 'more than one DPoP header'),
  },
  {
    name: "DPoP: another key's proof",
    headers: (f) => dpop(f, {}, f.otherKey),
    expect: refused('invalid_dpop_proof', 'the proof is signed by another key than the token is bound to'),
  },
  {
    name: 'DPoP: a proof for another method',
    headers: (f) => dpop(f, { method: 'DELETE' }),
    expect: refused('invalid_dpop_proof', "the proof's htm is 'DELETE', expected 'GET'"),
  },
  {
    name: 'DPoP: a proof for another URL',
    headers: (f) => dpop(f, { url: `${CONFORMANCE_PUBLIC_URL}/api/v1/datasets/owner/o-hidden` }),
    expect: refused(
      'invalid_dpop_proof',
      `the proof's htu is '${CONFORMANCE_PUBLIC_URL}/api/v1/datasets/owner/o-hidden', expected '${URL_}'`,
    ),
  },
  {
    name: 'DPoP: a stale proof',
    headers: (f) => dpop(f, { iat: Math.floor(Date.now() / 1000) - 3600 }),
    expect: refused('invalid_dpop_proof', "the proof's iat is more than 300 s in the past"),
  },
  {
    name: 'DPoP: a proof whose ath is for another token',
    headers: (f) => dpop(f, { claims: { ath: accessTokenHash(f.unbound) } }),
    expect: refused('invalid_dpop_proof', "the proof's ath is not the hash of the access token it came with"),
  },
  {
    name: 'DPoP: an unbound token with the DPoP scheme',
    headers: async (f) => ({
      authorization: `DPoP ${f.unbound}`,
      dpop: await proof(f, { token: f.unbound }),
    }),
    expect: refused('invalid_token', 'the token is not bound to a DPoP key: send it with the Bearer scheme'),
  },
]
