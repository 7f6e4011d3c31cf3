/**
 * The OAuth tests' world: a seed with users, data and four registered clients, a movable clock,
 * and the requests a client makes (the servers built on them: oauth-harness.ts).
 */
import { createHash, randomBytes } from 'node:crypto'
import { loadSeed, type Seed } from '../../examples/server/seed/load.js'
import { formWith, PageAgent, signInThrough } from './oauth-agent.js'

/** RFC 7636 Appendix B. */
export const RFC_VERIFIER = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk'
export const RFC_CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM'

export const CLI_SECRET = 'cli-secret-0123456789abcdefghijklmnopqrstuvwxyz'
export const CLI_REDIRECT = 'http://127.0.0.1:8765/cb'
export const WEB_REDIRECT = 'https://web.example/cb?tenant=7'
export const RS_SECRET = 'rs-secret-0123456789abcdefghijklmnopqrstuvwxyz'
export const ALICE_PASSWORD = 'alice-test-password'
export const BOB_PASSWORD = 'bob-test-password'

/** The seed's resource server (RFC 8707): tokens for it are refused by the API. */
export const REPORTS_RESOURCE = 'https://reports.example.org/mcp'

/** The device flow's `grant_type` (RFC 8628 §3.4). */
export const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code'

/** The seed file of the OAuth tests. */
export const OAUTH_SEED = {
  users: [
    { handle: 'alice', password: ALICE_PASSWORD },
    { handle: 'bob', password: BOB_PASSWORD },
  ],
  organizations: [{ handle: 'acme', admins: ['alice'], members: ['bob'] }],
  datasets: [
    {
      owner: 'acme',
      name: 'claims',
      description: 'Hidden claims.',
      publicLevel: 'none',
      access: { bob: 'metadata' },
    },
    { owner: 'alice', name: 'diary', description: "Alice's diary.", publicLevel: 'none' },
    { owner: 'alice', name: 'open', description: 'Open data.', publicLevel: 'data' },
  ],
  tokens: [],
  clients: [
    // Confidential, offline access: a refresh token with every token.
    { id: 'cli', secret: CLI_SECRET, redirectUris: [CLI_REDIRECT], offline: true },
    // Public, registered, no offline access; an https redirect URI with a query of its own.
    { id: 'web', redirectUris: [WEB_REDIRECT] },
    // Public, with offline access.
    { id: 'native', redirectUris: ['http://[::1]/done'], offline: true },
    // A resource server's credential: it may introspect, and signs nobody in.
    { id: 'rs', secret: RS_SECRET, redirectUris: [], introspect: true },
  ],
  // A resource server besides the API that tokens may be issued for (RFC 8707); its name is
  // markup, which the consent page must escape.
  resources: [{ uri: REPORTS_RESOURCE, name: 'Reports <b>tool</b> & "co"' }],
}

/** A test clock: epoch ms, moved by the tests. */
export interface TestClock {
  now: number
  readonly read: () => number
  advance(ms: number): void
}

/** A clock frozen at 2026-01-01T00:00:00Z until a test moves it. */
export function testClock(): TestClock {
  const clock: TestClock = {
    now: Date.UTC(2026, 0, 1),
    read: () => clock.now,
    advance: (ms) => {
      clock.now += ms
    },
  }
  return clock
}

let loaded: Promise<Seed> | undefined

/** The OAuth seed, loaded (scrypt-hashed) once per test file. */
export function oauthSeed(): Promise<Seed> {
  loaded ??= loadSeed(OAUTH_SEED)
  return loaded
}

/** A fresh PKCE pair. */
export function pkcePair(): { readonly verifier: string; readonly challenge: string } {
  const verifier = randomBytes(48).toString('base64url')
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') }
}

/** `Authorization: Basic …` (RFC 6749 §2.3.1: form-urlencoded first). */
export function basic(id: string, secret: string): string {
  const encode = (text: string) => encodeURIComponent(text).replaceAll('%20', '+')
  return `Basic ${Buffer.from(`${encode(id)}:${encode(secret)}`).toString('base64')}`
}

/** An authorization URL for `GET /oauth/authorize`. */
export function authorizeUrl(origin: string, params: Readonly<Record<string, string | undefined>>): string {
  const query = new URLSearchParams()
  for (const [name, value] of Object.entries(params)) if (value !== undefined) query.append(name, value)
  return `${origin}/oauth/authorize?${query}`
}

/** POSTs a form body to an endpoint and reads the JSON answer. */
export async function postForm(
  url: string,
  fields: Readonly<Record<string, string>> | URLSearchParams,
  headers: Readonly<Record<string, string>> = {},
): Promise<{ readonly status: number; readonly headers: Headers; readonly body: Record<string, unknown> }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(fields as Record<string, string>).toString(),
  })
  return {
    status: response.status,
    headers: response.headers,
    body: (await response.json()) as Record<string, unknown>,
  }
}

/** POSTs a JSON body to an endpoint and reads the JSON answer. */
export async function postJson(
  url: string,
  body: unknown,
  headers: Readonly<Record<string, string>> = {},
): Promise<{ readonly status: number; readonly headers: Headers; readonly body: Record<string, unknown> }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  })
  return {
    status: response.status,
    headers: response.headers,
    body: (await response.json()) as Record<string, unknown>,
  }
}

/** What an approved or denied authorization came back with. */
export interface AuthorizationOutcome {
  /** The redirect URI with its response parameters. */
  readonly callback: URL
  /** The consent page, as shown. */
  readonly consent: string
}

/**
 * The authorization-code flow in a browser's place: open the authorization URL, sign in through
 * the form it shows, answer the consent page with `decision`, and stop at the redirect to the
 * client.
 */
export async function authorizeThroughPages(
  agent: PageAgent,
  url: string,
  options: { readonly handle: string; readonly password: string; readonly decision?: 'approve' | 'deny' },
): Promise<AuthorizationOutcome> {
  const first = await agent.get(url)
  const consent = first.body.includes('name="password"')
    ? await signInThrough(agent, first, options.handle, options.password)
    : first
  if (consent.status !== 200) throw new Error(`no consent page (${consent.status}):\n${consent.body}`)
  const answer = await agent.submit(
    formWith(consent.body, 'decision'),
    {},
    { button: options.decision ?? 'approve' },
  )
  if (answer.location === undefined)
    throw new Error(`no redirect after consent (${answer.status}):\n${answer.body}`)
  return { callback: new URL(answer.location), consent: consent.body }
}

/** Calls an API path with a bearer token. */
export async function callApi(origin: string, path: string, token: string): Promise<number> {
  const response = await fetch(`${origin}${path}`, { headers: { authorization: `Bearer ${token}` } })
  await response.arrayBuffer()
  return response.status
}

/**
 * Alice's tokens for the confidential offline client `cli`: the pages, then the token endpoint;
 * for the API, or for the `resources` named (RFC 8707).
 */
export async function tokensThroughPages(
  origin: string,
  scope = 'data.data',
  resources: readonly string[] = [],
): Promise<{ readonly access_token: string; readonly refresh_token: string }> {
  const { verifier, challenge } = pkcePair()
  const url = new URL(
    authorizeUrl(origin, {
      response_type: 'code',
      client_id: 'cli',
      redirect_uri: CLI_REDIRECT,
      scope,
      state: 's',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    }),
  )
  for (const resource of resources) url.searchParams.append('resource', resource)
  const { callback } = await authorizeThroughPages(new PageAgent(origin), url.href, {
    handle: 'alice',
    password: ALICE_PASSWORD,
  })
  const answer = await postForm(
    `${origin}/oauth/token`,
    {
      grant_type: 'authorization_code',
      code: callback.searchParams.get('code')!,
      redirect_uri: CLI_REDIRECT,
      code_verifier: verifier,
    },
    { authorization: basic('cli', CLI_SECRET) },
  )
  if (answer.status !== 200) throw new Error(`no tokens (${answer.status}): ${JSON.stringify(answer.body)}`)
  return answer.body as { access_token: string; refresh_token: string }
}
