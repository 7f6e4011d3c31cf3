/**
 * The flows the DPoP end-to-end files share: the reference servers on the real clock (the client
 * libraries date their proofs with it), Alice's approval of an authorization request, and the
 * authorization code flow with PKCE and DPoP as oauth4webapi and openid-client 6 run it.
 */
import * as oauth from 'oauth4webapi'
import * as client from 'openid-client'
import { afterAll, beforeAll } from 'vitest'
import { FRAMEWORKS, type Framework } from '../../examples/server/flags.js'
import { loadSeed } from '../../examples/server/seed/load.js'
import type { SeedClient } from '../../examples/server/seed/schema.js'
import { type StartedServer, startServer } from '../../examples/server/server.js'
import { PageAgent } from '../server/oauth-agent.js'
import {
  ALICE_PASSWORD,
  authorizeThroughPages,
  authorizeUrl,
  CLI_REDIRECT,
  CLI_SECRET,
  OAUTH_SEED,
  pkcePair,
} from '../server/oauth-fixtures.js'

/** oauth4webapi's option for the servers' plain-HTTP origins on 127.0.0.1. */
export const INSECURE = { [oauth.allowInsecureRequests]: true } as const

// openid-client's request timeout, in seconds: none a busy machine reaches.
const NO_REQUEST_DEADLINE_S = 3_600

/** A client as a seed file writes it: what it leaves out takes its default. */
export type ClientEntry = Pick<SeedClient, 'id' | 'redirectUris'> & Partial<SeedClient>

/** The public client `app`, with offline access: its refresh family is bound to its key. */
export const APP_CLIENT: ClientEntry = { id: 'app', redirectUris: [CLI_REDIRECT], offline: true }

/**
 * Registers hooks that start one reference server per framework, seeded with the OAuth seed's
 * clients and `clients`, and close them; returns the origin of a framework's server.
 */
export function useDpopServers(clients: readonly ClientEntry[]): (framework: Framework) => string {
  let servers: Record<Framework, StartedServer>
  beforeAll(async () => {
    const seed = await loadSeed({ ...OAUTH_SEED, clients: [...OAUTH_SEED.clients, ...clients] })
    const started = await Promise.all(
      FRAMEWORKS.map((framework) => startServer({ seed, framework, host: '127.0.0.1', port: 0 })),
    )
    servers = Object.fromEntries(started.map((server) => [server.framework, server])) as Record<
      Framework,
      StartedServer
    >
  })
  afterAll(async () => {
    await Promise.all(Object.values(servers ?? {}).map((server) => server.close()))
  })
  return (framework) => servers[framework].url
}

/** Returns the redirect to the client after Alice signs in at `origin` and approves `url`. */
export async function approvedCallback(origin: string, url: string): Promise<URL> {
  const agent = new PageAgent(origin)
  const { callback } = await authorizeThroughPages(agent, url, { handle: 'alice', password: ALICE_PASSWORD })
  return callback
}

/** Returns the token request fields for a code Alice approved for `clientId`, hand-made, state `s`. */
export async function codeGrantFields(
  origin: string,
  clientId: string,
  extra: Record<string, string> = {},
): Promise<Record<string, string>> {
  const { verifier, challenge } = pkcePair()
  const url = authorizeUrl(origin, {
    response_type: 'code',
    client_id: clientId,
    redirect_uri: CLI_REDIRECT,
    scope: 'data.overview',
    state: 's',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    ...extra,
  })
  const callback = await approvedCallback(origin, url)
  return {
    grant_type: 'authorization_code',
    code: callback.searchParams.get('code')!,
    redirect_uri: CLI_REDIRECT,
    code_verifier: verifier,
    ...(clientId !== 'cli' && { client_id: clientId }),
  }
}

/** oauth4webapi's view of a server for the public client `app`, with a DPoP key pair of its own. */
export interface Oauth4Session {
  readonly as: oauth.AuthorizationServer
  readonly app: oauth.Client
  readonly pair: CryptoKeyPair
  readonly DPoP: oauth.DPoPHandle
}

/** Returns oauth4webapi's discovered metadata of `origin`, client `app` and a fresh ES256 DPoP handle. */
export async function oauth4Session(origin: string): Promise<Oauth4Session> {
  const issuer = new URL(origin)
  const as = await oauth.processDiscoveryResponse(
    issuer,
    await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...INSECURE }),
  )
  const app: oauth.Client = { client_id: 'app' }
  const pair = await oauth.generateKeyPair('ES256')
  return { as, app, pair, DPoP: oauth.DPoP(app, pair) }
}

/** Returns oauth4webapi's DPoP tokens for a code Alice approved, `extra` added to the request. */
export async function oauth4Code(
  origin: string,
  { as, app, DPoP }: Oauth4Session,
  extra: Record<string, string> = {},
): Promise<oauth.TokenEndpointResponse> {
  const verifier = oauth.generateRandomCodeVerifier()
  const url = new URL(as.authorization_endpoint!)
  url.search = new URLSearchParams({
    response_type: 'code',
    client_id: app.client_id,
    redirect_uri: CLI_REDIRECT,
    scope: 'data.overview',
    state: 'st',
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    ...extra,
  }).toString()
  const params = oauth.validateAuthResponse(as, app, await approvedCallback(origin, url.href), 'st')
  return oauth.processAuthorizationCodeResponse(
    as,
    app,
    await oauth.authorizationCodeGrantRequest(as, app, oauth.None(), params, CLI_REDIRECT, verifier, {
      DPoP,
      ...INSECURE,
    }),
  )
}

/** Returns oauth4webapi's refreshed tokens, proven by `DPoP` (no proof when undefined); throws a refusal. */
export async function oauth4Refresh(
  { as, app }: Oauth4Session,
  refreshToken: string,
  DPoP: oauth.DPoPHandle | undefined,
): Promise<oauth.TokenEndpointResponse> {
  const options = DPoP === undefined ? INSECURE : { DPoP, ...INSECURE }
  return oauth.processRefreshTokenResponse(
    as,
    app,
    await oauth.refreshTokenGrantRequest(as, app, oauth.None(), refreshToken, options),
  )
}

/** openid-client's configuration of the confidential client `cli`, with a DPoP key pair of its own. */
export interface OpenIdSession {
  readonly config: client.Configuration
  readonly pair: CryptoKeyPair
  readonly DPoP: client.DPoPHandle
}

/** Returns openid-client's discovered configuration of `cli` at `origin` and a fresh ES256 DPoP handle. */
export async function openIdSession(origin: string): Promise<OpenIdSession> {
  const config = await client.discovery(
    new URL(origin),
    'cli',
    CLI_SECRET,
    client.ClientSecretBasic(CLI_SECRET),
    {
      algorithm: 'oauth2',
      execute: [client.allowInsecureRequests],
      timeout: NO_REQUEST_DEADLINE_S,
    },
  )
  const pair = await client.randomDPoPKeyPair('ES256')
  return { config, pair, DPoP: client.getDPoPHandle(config, pair) }
}

/** Returns openid-client's DPoP tokens for a code Alice approved for `cli` at `origin`. */
export async function openIdCode(
  origin: string,
  { config, DPoP }: OpenIdSession,
): Promise<client.TokenEndpointResponse & client.TokenEndpointResponseHelpers> {
  const pkceCodeVerifier = client.randomPKCECodeVerifier()
  const query = new URLSearchParams({
    redirect_uri: CLI_REDIRECT,
    scope: 'data.overview',
    state: 'st',
    code_challenge: await client.calculatePKCECodeChallenge(pkceCodeVerifier),
    code_challenge_method: 'S256',
  })
  const callback = await approvedCallback(origin, client.buildAuthorizationUrl(config, query).href)
  return client.authorizationCodeGrant(
    config,
    callback,
    { pkceCodeVerifier, expectedState: 'st' },
    undefined,
    {
      DPoP,
    },
  )
}
