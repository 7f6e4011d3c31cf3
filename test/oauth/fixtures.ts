import { calculatePkceChallenge } from '../../src/oauth/calculate-pkce-challenge.js'
import type { HandleTokenRequestOptions } from '../../src/oauth/handle-token-request.js'
import { issueAuthorizationCode } from '../../src/oauth/issue-authorization-code.js'
import { MemoryOAuthStateStore } from '../../src/oauth/memory-oauth-state-store.js'
import { hashClientSecret, type LookupClient, type OAuthClient } from '../../src/oauth/oauth-client.js'
import type { OAuthStateStore } from '../../src/oauth/oauth-state-store.js'
import { validateAuthorizationRequest } from '../../src/oauth/validate-authorization-request.js'
import { MemoryTokenStore } from '../../src/tokens/memory-token-store.js'
import { generateRandomBase62 } from '../../src/tokens/token-format.js'
import { hashTokenValue } from '../../src/tokens/token-hash.js'
import type { TokenRecord } from '../../src/tokens/token-record.js'

// Shared fixtures of the OAuth tests: a frozen clock, clients, and a fresh server-side world.

/** A frozen clock: 2025-01-01T00:00:00Z. */
export const NOW = Date.UTC(2025, 0, 1)

/** RFC 7636 Appendix B. */
export const RFC_VERIFIER = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk'
export const RFC_CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM'

export const CLI_SECRET = 'cli-secret-0123456789abcdefghijklmnopqrstuvwxyz'

/** A confidential client with offline access. */
export const CLI: OAuthClient = {
  id: 'cli',
  secretHash: hashClientSecret(CLI_SECRET),
  redirectUris: ['http://127.0.0.1:8765/cb', 'https://app.example/cb?tenant=7'],
  offline: true,
  name: 'Command line',
}

/** A public registered client without offline access. */
export const WEB: OAuthClient = { id: 'web', redirectUris: ['https://web.example/cb'], offline: false }

/** A public registered client with offline access (a native app). */
export const NATIVE: OAuthClient = { id: 'native', redirectUris: ['http://[::1]/done'], offline: true }

export const RESOURCE_SECRET = 'rs-secret-0123456789abcdefghijklmnopqrstuvwxyz'

/** A resource server's credential: confidential, allowed to introspect (RFC 7662 §4). */
export const RESOURCE: OAuthClient = {
  id: 'rs',
  secretHash: hashClientSecret(RESOURCE_SECRET),
  redirectUris: [],
  offline: false,
  introspect: true,
}

/** A public client with offline access the operator registered as DPoP-bound (RFC 9449). */
export const BOUND: OAuthClient = {
  id: 'bound',
  redirectUris: ['http://127.0.0.1:8765/cb'],
  offline: true,
  dpopBound: true,
}

const CLIENTS = new Map([CLI, WEB, NATIVE, RESOURCE, BOUND].map((client) => [client.id, client]))

export const lookupClient: LookupClient = async (id) => CLIENTS.get(id)

/** A fresh random verifier and its challenge. */
export function pkcePair(): { readonly verifier: string; readonly challenge: string } {
  const verifier = generateRandomBase62(64)
  return { verifier, challenge: calculatePkceChallenge(verifier) }
}

/** `Authorization: Basic …` for an id and secret (form-urlencoded first, RFC 6749 §2.3.1). */
export function basic(id: string, secret: string): string {
  const encode = (text: string) => encodeURIComponent(text).replaceAll('%20', '+')
  return `Basic ${btoa(`${encode(id)}:${encode(secret)}`)}`
}

/** The stores and options of one test's token endpoint. */
export type World = {
  readonly state: MemoryOAuthStateStore
  readonly tokens: MemoryTokenStore
  options(now: number, extra?: Partial<HandleTokenRequestOptions>): HandleTokenRequestOptions
  /** The stored record of an access token value. */
  token(value: string): Promise<TokenRecord | undefined>
}

export function createWorld(): World {
  const state = new MemoryOAuthStateStore()
  // The store's clock stays at NOW: the tests' records (at NOW and after) are within their end.
  const tokens = new MemoryTokenStore({ now: () => NOW })
  return {
    state,
    tokens,
    options: (now, extra = {}) => ({ clients: lookupClient, state, tokens, now, ...extra }),
    token: async (value) => tokens.findByHash(hashTokenValue(value)),
  }
}

/** What {@link authorize} obtained: a fresh code and the verifier it is bound to. */
export type Authorized = {
  readonly code: string
  readonly verifier: string
  readonly challenge: string
  readonly redirectUri: string
}

/** Runs the authorization endpoint for `clientId` (or a session client) and issues a code for `userId`. */
export async function authorize(
  world: World,
  options: {
    readonly clientId?: string
    readonly redirectUri?: string
    readonly scope?: string
    readonly userId?: string
    readonly now?: number
    /** The `dpop_jkt` of the request (RFC 9449 §10). */
    readonly dpopJkt?: string
  } = {},
): Promise<Authorized> {
  const { verifier, challenge } = pkcePair()
  const redirectUri = options.redirectUri ?? 'http://127.0.0.1:8765/cb'
  const result = await validateAuthorizationRequest(
    {
      response_type: 'code',
      client_id: options.clientId,
      redirect_uri: redirectUri,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      scope: options.scope ?? 'data.metadata',
      state: 'xyz',
      dpop_jkt: options.dpopJkt,
    },
    lookupClient,
  )
  if (!result.ok) throw new Error(`authorization request refused: ${result.error.message}`)
  const { code } = await issueAuthorizationCode({
    request: result.request,
    userId: options.userId ?? 'alice',
    now: options.now ?? NOW,
    store: world.state,
  })
  return { code, verifier, challenge, redirectUri }
}

/** The token request parameters that redeem an authorized code. */
export function codeParams(authorized: Authorized, overrides: Record<string, string | undefined> = {}) {
  return {
    grant_type: 'authorization_code',
    code: authorized.code,
    redirect_uri: authorized.redirectUri,
    code_verifier: authorized.verifier,
    ...overrides,
  }
}

/** A store that delegates to `store` except for the methods in `overrides` (to inject races and faults). */
export function wrapStore(store: OAuthStateStore, overrides: Partial<OAuthStateStore>): OAuthStateStore {
  return {
    saveAuthorizationCode: (record) => store.saveAuthorizationCode(record),
    findAuthorizationCode: (hash, now) => store.findAuthorizationCode(hash, now),
    replaceAuthorizationCode: (next) => store.replaceAuthorizationCode(next),
    saveDeviceGrant: (record) => store.saveDeviceGrant(record),
    findDeviceGrant: (hash, now) => store.findDeviceGrant(hash, now),
    findDeviceGrantByUserCode: (hash, now) => store.findDeviceGrantByUserCode(hash, now),
    replaceDeviceGrant: (next) => store.replaceDeviceGrant(next),
    saveRefreshFamily: (record) => store.saveRefreshFamily(record),
    findRefreshFamily: (id, now) => store.findRefreshFamily(id, now),
    findRefreshFamilyByTokenHash: (hash, now) => store.findRefreshFamilyByTokenHash(hash, now),
    replaceRefreshFamily: (next) => store.replaceRefreshFamily(next),
    countUserCodeFailures: (key, now) => store.countUserCodeFailures(key, now),
    recordUserCodeFailure: (key, now, windowMs) => store.recordUserCodeFailure(key, now, windowMs),
    ...overrides,
  }
}
