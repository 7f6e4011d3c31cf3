/**
 * The adapters' own behaviour table: what a host gets from `accessControl` (and `sendData` /
 * `streamData`) that the reference server's conformance table (test/conformance/cases.ts, the
 * protocol rules over HTTP on all three frameworks) does not exercise — options it never sets
 * (`trustProxy` off, an authenticate-only route), failures it cannot stage (a store that throws or
 * hangs, a resolver that throws), OAuth-issued tokens, HEAD, declared and streamed export sizes, and
 * the odd request targets that the server's front door refuses before any router sees them.
 * Every row runs on in-process apps built on each framework from the adapters alone.
 */
import type { TokenValues } from './fixture.js'

/** What an adapter case expects: a complete answer, or a transfer that breaks off. */
export type AdapterExpectation =
  | {
      readonly status: number
      /** The exact body. */
      readonly body: string
      /** The exact `WWW-Authenticate` value, or null for none. */
      readonly wwwAuthenticate: string | null
    }
  | {
      /**
       * The transfer must break off after at most this many body bytes. The status is not compared:
       * a framework may break the connection before or after it has flushed the headers.
       */
      readonly brokenAfterAtMost: number
    }

/** One row of the adapters' behaviour table: a request and the answer every framework must give. */
export interface AdapterCase {
  readonly name: string
  /** Which instance: the one trusting 127.0.0.1 as a proxy (default) or the one trusting none. */
  readonly server?: 'trusted' | 'untrusted'
  readonly method?: 'GET' | 'HEAD' | 'POST'
  readonly path: string | ((tokens: TokenValues) => string)
  readonly headers?: (tokens: TokenValues) => Readonly<Record<string, string | readonly string[]>>
  readonly body?: string | ((tokens: TokenValues) => string)
  readonly expect: AdapterExpectation
}

// The contract's messages, written out here rather than taken from the core under test.
const MESSAGES: Readonly<Record<number, string>> = {
  401: 'Invalid credentials',
  403: 'Not authorized',
  404: 'Not found',
  503: 'Service unavailable',
}

function errorBody(status: number, code: string): string {
  return `{"error":{"status":${status},"message":"${MESSAGES[status]}","code":"${code}"}}`
}

// The fixture's policy guards https://data.example.test/api/v1: its 401s name the metadata URL
// RFC 9728 §3.1 derives from that resource.
const METADATA = 'resource_metadata="https://data.example.test/.well-known/oauth-protected-resource/api/v1"'

const denied = {
  missingToken: {
    status: 401,
    body: errorBody(401, 'missing_token'),
    wwwAuthenticate: `Bearer realm="data-api", ${METADATA}`,
  },
  otherResource: {
    status: 401,
    body: errorBody(401, 'invalid_token'),
    wwwAuthenticate: `Bearer realm="data-api", error="invalid_token", error_description="the token is for another resource", scope="data.overview", ${METADATA}`,
  },
  exportRestricted: { status: 403, body: errorBody(403, 'export_restricted'), wwwAuthenticate: null },
  notFound: { status: 404, body: errorBody(404, 'not_found'), wwwAuthenticate: null },
  unavailable: { status: 503, body: errorBody(503, 'service_unavailable'), wwwAuthenticate: null },
} as const

const ok = (body: string) => ({ status: 200, body, wwwAuthenticate: null })

const bearer = (token: string) => ({ authorization: `Bearer ${token}` })

const OPEN = '/api/v1/datasets/acme/open'
const MEMBERS_METADATA = '/api/v1/datasets/acme/members/metadata'
const FENCED_ROWS = '/api/v1/datasets/acme/fenced/rows?n=2'
const CAPPED = '/api/v1/datasets/acme/capped'

const OPEN_OVERVIEW = ok('{"owner":"acme","name":"open"}')

// A client 203.0.113.7 behind the trusted proxy at 127.0.0.1.
const viaProxy =
  (proto: string | undefined, forwardedFor = '203.0.113.7') =>
  (tokens: TokenValues) => ({
    ...bearer(tokens.alice),
    'x-forwarded-for': forwardedFor,
    ...(proto === undefined ? {} : { 'x-forwarded-proto': proto }),
  })

/** The adapters' behaviour table (design §10, invariant 7): every framework must answer each row alike. */
export const ADAPTER_CASES: readonly AdapterCase[] = [
  // Token kinds and the store (design §4, §6): seeds hold API tokens only; a store can fail
  { name: 'an OAuth token', path: OPEN, headers: (t) => bearer(t.oauth), expect: OPEN_OVERVIEW },
  // Audiences (RFC 8707): a token bound to resources is good only where the policy guards one of them
  {
    name: 'an OAuth token whose audience names this resource',
    path: OPEN,
    headers: (t) => bearer(t.oauthHere),
    expect: OPEN_OVERVIEW,
  },
  {
    name: 'an OAuth token for another resource',
    path: OPEN,
    headers: (t) => bearer(t.oauthElsewhere),
    expect: denied.otherResource,
  },
  {
    name: 'a token store that throws',
    path: OPEN,
    headers: (t) => bearer(t.failing),
    expect: denied.unavailable,
  },
  {
    name: 'a token store that hangs',
    path: OPEN,
    headers: (t) => bearer(t.hanging),
    expect: denied.unavailable,
  },

  // Resolvers and route options: a resolver that fails, `accessControl()` without an operation, HEAD
  {
    name: 'a resolver that throws',
    path: '/api/v1/datasets/acme/broken',
    headers: (t) => bearer(t.alice),
    expect: denied.unavailable,
  },
  {
    name: 'authenticate-only route',
    path: '/api/v1/users/alice/datasets',
    headers: (t) => bearer(t.bob),
    expect: ok('{"user":"alice","caller":"bob"}'),
  },
  {
    name: 'authenticate-only route without a token',
    path: '/api/v1/users/alice/datasets',
    expect: denied.missingToken,
  },
  {
    name: 'HEAD without a token',
    method: 'HEAD',
    path: MEMBERS_METADATA,
    expect: {
      ...denied.missingToken,
      body: '',
      wwwAuthenticate: `Bearer realm="data-api", scope="data.metadata", ${METADATA}`,
    },
  },
  {
    name: 'HEAD on a hidden dataset',
    method: 'HEAD',
    path: MEMBERS_METADATA,
    headers: (t) => bearer(t.carol),
    expect: { ...denied.notFound, body: '' },
  },

  // `trustProxy` off: forwarding headers are the client's words, never evidence (design §4, §5)
  {
    name: 'forwarding headers from an untrusted (loopback) peer are ignored',
    server: 'untrusted',
    path: OPEN,
    headers: viaProxy('http'),
    expect: OPEN_OVERVIEW,
  },
  {
    name: 'a spoofed X-Forwarded-For from an untrusted peer',
    server: 'untrusted',
    path: FENCED_ROWS,
    headers: viaProxy('https', '10.1.2.3'),
    expect: denied.exportRestricted,
  },

  // Export caps through `sendData` (a declared size) and `streamData` (the meter) (design §5)
  {
    name: 'declared records at the cap',
    path: `${CAPPED}/rows?n=5`,
    headers: (t) => bearer(t.alice),
    expect: ok('{"rows":[[0],[1],[2],[3],[4]]}'),
  },
  {
    name: 'declared records one over the cap',
    path: `${CAPPED}/rows?n=6`,
    headers: (t) => bearer(t.alice),
    expect: denied.exportRestricted,
  },
  {
    name: 'declared bytes at the cap',
    path: `${CAPPED}/blob?bytes=100`,
    headers: (t) => bearer(t.alice),
    expect: ok('x'.repeat(100)),
  },
  {
    name: 'declared bytes one over the cap',
    path: `${CAPPED}/blob?bytes=101`,
    headers: (t) => bearer(t.alice),
    expect: denied.exportRestricted,
  },
  {
    name: 'a stream exactly at both caps',
    path: `${CAPPED}/stream?chunks=5&size=20`,
    headers: (t) => bearer(t.alice),
    expect: ok('x'.repeat(100)),
  },
  {
    name: 'a stream one record over the cap breaks off',
    path: `${CAPPED}/stream?chunks=6&size=10`,
    headers: (t) => bearer(t.alice),
    expect: { brokenAfterAtMost: 50 },
  },
  {
    name: 'a stream passing the byte cap mid-way breaks off',
    path: `${CAPPED}/stream?chunks=4&size=30`,
    headers: (t) => bearer(t.alice),
    expect: { brokenAfterAtMost: 90 },
  },
  {
    name: 'a stream whose first chunk passes the cap breaks off',
    path: `${CAPPED}/stream?chunks=1&size=101`,
    headers: (t) => bearer(t.alice),
    expect: { brokenAfterAtMost: 0 },
  },
  // A record cap can only be enforced on chunks that say how many records they carry: an uncounted
  // chunk under a record cap breaks the transfer like an overrun, before its first byte.
  {
    name: 'a stream of uncounted chunks under a record cap breaks off at once',
    path: `${CAPPED}/stream?chunks=2&size=10&uncounted`,
    headers: (t) => bearer(t.alice),
    expect: { brokenAfterAtMost: 0 },
  },
  {
    name: 'uncounted chunks under a byte cap alone complete within it',
    path: '/api/v1/datasets/acme/bytecapped/stream?chunks=3&size=30&uncounted',
    headers: (t) => bearer(t.alice),
    expect: ok('x'.repeat(90)),
  },
  {
    name: 'uncounted chunks under a byte cap alone break off past it',
    path: '/api/v1/datasets/acme/bytecapped/stream?chunks=4&size=30&uncounted',
    headers: (t) => bearer(t.alice),
    expect: { brokenAfterAtMost: 90 },
  },
  {
    name: 'an uncapped stream of uncounted chunks completes',
    path: '/api/v1/datasets/acme/open/stream?chunks=4&size=30&uncounted',
    headers: (t) => bearer(t.alice),
    expect: ok('x'.repeat(120)),
  },
  {
    name: 'an uncapped stream completes',
    path: '/api/v1/datasets/acme/open/stream?chunks=8&size=30',
    headers: (t) => bearer(t.alice),
    expect: ok('x'.repeat(240)),
  },

  // The guard sits on the route as each framework's router matched it: path tricks never reach the
  // handler unguarded. The reference server refuses these targets before routing, so only a bare
  // host meets them. The target is hidden from carol, so a guarded route and an unmatched path both
  // answer 404, and only a bypass could answer anything else.
  ...[
    MEMBERS_METADATA,
    '/API/v1/datasets/acme/members/metadata',
    '/api/V1/datasets/acme/members/metadata',
    '/%61pi/v1/datasets/acme/members/metadata',
    '/api/v1/datasets/acme/%6dembers/metadata',
    '/api/v1/datasets/acme/members/metadat%61',
    '/api/v1/datasets/acme/members/metadata/',
    '/api/v1/datasets/acme/members/metadata//',
    '/api//v1/datasets/acme/members/metadata',
    '/x/../api/v1/datasets/acme/members/metadata',
    '/api/v1/x/../datasets/acme/members/metadata',
    '/api/v1/datasets/acme/members/./metadata',
    '/api/v1/datasets/acme/members/%2e/metadata',
    '/api/v1/datasets/acme/members/metadata%2f',
    '/api/v1/datasets/acme/members/metadata;x',
    '/api/v1/datasets/acme/members/metadata?x=/../',
    '/api/v1/datasets/acme/members/metadata#x',
  ].map(
    (path): AdapterCase => ({
      name: `path ${path} on a hidden dataset`,
      path,
      headers: (t) => bearer(t.carol),
      expect: denied.notFound,
    }),
  ),
]
