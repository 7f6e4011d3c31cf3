import type { TokenValues } from './fixture.js'

/** What a conformance case expects: a complete answer, or a transfer that breaks off. */
export type ConformanceExpectation =
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

/** One row of the adapter conformance table: a request and the answer every framework must give. */
export interface ConformanceCase {
  readonly name: string
  /** Which instance: the one trusting 127.0.0.1 as a proxy (default) or the one trusting none. */
  readonly server?: 'trusted' | 'untrusted'
  readonly method?: 'GET' | 'HEAD' | 'POST'
  readonly path: string | ((tokens: TokenValues) => string)
  readonly headers?: (tokens: TokenValues) => Readonly<Record<string, string | readonly string[]>>
  readonly body?: string | ((tokens: TokenValues) => string)
  readonly expect: ConformanceExpectation
}

// The contract's messages, written out here rather than taken from the core under test.
const MESSAGES: Readonly<Record<number, string>> = {
  400: 'Bad request',
  401: 'Invalid credentials',
  403: 'Not authorized',
  404: 'Not found',
  503: 'Service unavailable',
}

function errorBody(status: number, code: string): string {
  return `{"error":{"status":${status},"message":"${MESSAGES[status]}","code":"${code}"}}`
}

const CHALLENGE = {
  missing: 'Bearer realm="data-api"',
  invalidRequest: 'Bearer realm="data-api", error="invalid_request"',
  invalidToken: 'Bearer realm="data-api", error="invalid_token"',
  scope: (scope: string) => `Bearer error="insufficient_scope", scope="${scope}"`,
}

const denied = {
  missingToken: { status: 401, body: errorBody(401, 'missing_token'), wwwAuthenticate: CHALLENGE.missing },
  invalidRequest: {
    status: 400,
    body: errorBody(400, 'invalid_request'),
    wwwAuthenticate: CHALLENGE.invalidRequest,
  },
  invalidToken: {
    status: 401,
    body: errorBody(401, 'invalid_token'),
    wwwAuthenticate: CHALLENGE.invalidToken,
  },
  httpsRequired: { status: 403, body: errorBody(403, 'https_required'), wwwAuthenticate: null },
  insufficientScope: (scope: string) => ({
    status: 403,
    body: errorBody(403, 'insufficient_scope'),
    wwwAuthenticate: CHALLENGE.scope(scope),
  }),
  insufficientAccess: { status: 403, body: errorBody(403, 'insufficient_access'), wwwAuthenticate: null },
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
const MEMBERS_METADATA_BODY = ok('{"owner":"acme","name":"members","tables":["visits"]}')
const TWO_ROWS = ok('{"rows":[[0],[1]]}')
const EXPORT_CSV = ok('id\n0\n1\n')

// A client 203.0.113.7 behind the trusted proxy at 127.0.0.1.
const viaProxy =
  (proto: string | undefined, forwardedFor = '203.0.113.7') =>
  (tokens: TokenValues) => ({
    ...bearer(tokens.alice),
    'x-forwarded-for': forwardedFor,
    ...(proto === undefined ? {} : { 'x-forwarded-proto': proto }),
  })

const json = { 'content-type': 'application/json' }
const form = { 'content-type': 'application/x-www-form-urlencoded' }

/** The adapter conformance table (design §10, invariant 7): every framework must answer each row alike. */
export const CONFORMANCE_CASES: readonly ConformanceCase[] = [
  // RFC 6750 header grammar (design §4)
  { name: 'no Authorization header', path: OPEN, expect: denied.missingToken },
  {
    name: 'Basic credentials',
    path: OPEN,
    headers: () => ({ authorization: 'Basic dXNlcjpwYXNz' }),
    expect: denied.missingToken,
  },
  {
    name: 'BearerT… is another scheme',
    path: OPEN,
    headers: (t) => ({ authorization: `Bearer${t.alice}` }),
    expect: denied.missingToken,
  },
  {
    name: 'Bearer without a token',
    path: OPEN,
    headers: () => ({ authorization: 'Bearer' }),
    expect: denied.invalidRequest,
  },
  {
    name: 'empty Authorization header',
    path: OPEN,
    headers: () => ({ authorization: '' }),
    expect: denied.invalidRequest,
  },
  {
    name: 'Bearer, tab, token',
    path: OPEN,
    headers: (t) => ({ authorization: `Bearer\t${t.alice}` }),
    expect: denied.invalidRequest,
  },
  {
    name: 'Bearer, no-break space, token',
    path: OPEN,
    headers: (t) => ({ authorization: `Bearer\u00a0${t.alice}` }),
    expect: denied.invalidRequest,
  },
  {
    name: 'Bearer token followed by another word',
    path: OPEN,
    headers: (t) => ({ authorization: `Bearer ${t.alice} x` }),
    expect: denied.invalidRequest,
  },
  {
    name: 'a revoked token with a comma appended',
    path: OPEN,
    headers: (t) => ({ authorization: `Bearer ${t.revoked},` }),
    expect: denied.invalidRequest,
  },
  {
    name: 'a revoked token with = appended',
    path: OPEN,
    headers: (t) => ({ authorization: `Bearer ${t.revoked}=` }),
    expect: denied.invalidToken,
  },
  {
    name: 'a revoked token with trailing space',
    path: OPEN,
    headers: (t) => ({ authorization: `Bearer ${t.revoked} ` }),
    expect: denied.invalidToken,
  },
  {
    name: 'a token far longer than the format',
    path: OPEN,
    headers: () => ({ authorization: `Bearer ${'a'.repeat(4000)}` }),
    expect: denied.invalidToken,
  },
  {
    name: 'a token with a broken checksum',
    path: OPEN,
    headers: (t) => ({ authorization: `Bearer ${t.alice.slice(0, -1)}${t.alice.endsWith('0') ? '1' : '0'}` }),
    expect: denied.invalidToken,
  },
  { name: 'a good token', path: OPEN, headers: (t) => bearer(t.alice), expect: OPEN_OVERVIEW },
  {
    name: 'lower-case scheme',
    path: OPEN,
    headers: (t) => ({ authorization: `bearer ${t.alice}` }),
    expect: OPEN_OVERVIEW,
  },
  {
    name: 'several spaces after Bearer',
    path: OPEN,
    headers: (t) => ({ authorization: `Bearer   ${t.alice}` }),
    expect: OPEN_OVERVIEW,
  },
  { name: 'an OAuth token', path: OPEN, headers: (t) => bearer(t.oauth), expect: OPEN_OVERVIEW },

  // One token, one place (RFC 6750 §2)
  {
    name: 'two Authorization headers with the same token',
    path: OPEN,
    headers: (t) => ({ authorization: [`Bearer ${t.alice}`, `Bearer ${t.alice}`] }),
    expect: denied.invalidRequest,
  },
  {
    name: 'a Basic header, then a Bearer header',
    path: OPEN,
    headers: (t) => ({ authorization: ['Basic dXNlcjpwYXNz', `Bearer ${t.alice}`] }),
    expect: denied.invalidRequest,
  },
  {
    name: 'header and access_token in the query',
    path: (t) => `${OPEN}?access_token=${t.alice}`,
    headers: (t) => bearer(t.alice),
    expect: denied.invalidRequest,
  },
  {
    name: 'header and a percent-encoded access_token name in the query',
    path: `${OPEN}?access%5Ftoken=x`,
    headers: (t) => bearer(t.alice),
    expect: denied.invalidRequest,
  },
  {
    name: 'header with an unknown token and access_token in the query',
    path: `${OPEN}?access_token=x`,
    headers: (t) => bearer(t.unknown),
    expect: denied.invalidRequest,
  },
  {
    name: 'access_token in the query only',
    path: (t) => `${OPEN}?access_token=${t.alice}`,
    expect: denied.missingToken,
  },
  {
    name: 'header and access_token in a JSON body',
    method: 'POST',
    path: '/api/v1/datasets/acme/open/exports',
    headers: (t) => ({ ...bearer(t.alice), ...json }),
    body: (t) => JSON.stringify({ table: 'visits', access_token: t.alice }),
    expect: denied.invalidRequest,
  },
  {
    name: 'header and access_token in a form body',
    method: 'POST',
    path: '/api/v1/datasets/acme/open/exports',
    headers: (t) => ({ ...bearer(t.alice), ...form }),
    body: (t) => `table=visits&access_token=${t.alice}`,
    expect: denied.invalidRequest,
  },
  {
    name: 'access_token in a form body only',
    method: 'POST',
    path: '/api/v1/datasets/acme/open/exports',
    headers: () => form,
    body: (t) => `access_token=${t.alice}`,
    expect: denied.missingToken,
  },
  {
    name: 'header and a JSON body without access_token',
    method: 'POST',
    path: '/api/v1/datasets/acme/open/exports',
    headers: (t) => ({ ...bearer(t.alice), ...json }),
    body: '{"table":"visits"}',
    expect: EXPORT_CSV,
  },

  // Token status and the store (design §4, §6)
  { name: 'an unknown token', path: OPEN, headers: (t) => bearer(t.unknown), expect: denied.invalidToken },
  { name: 'a revoked token', path: OPEN, headers: (t) => bearer(t.revoked), expect: denied.invalidToken },
  { name: 'an expired token', path: OPEN, headers: (t) => bearer(t.expired), expect: denied.invalidToken },
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

  // Visibility (design §3)
  {
    name: 'public data, public-only token',
    path: OPEN,
    headers: (t) => bearer(t.carol),
    expect: OPEN_OVERVIEW,
  },
  {
    name: 'hidden dataset, stranger: 404',
    path: MEMBERS_METADATA,
    headers: (t) => bearer(t.carol),
    expect: denied.notFound,
  },
  {
    name: 'hidden dataset, member with metadata access',
    path: MEMBERS_METADATA,
    headers: (t) => bearer(t.bob),
    expect: MEMBERS_METADATA_BODY,
  },
  {
    name: 'member short of access: insufficient_access',
    path: '/api/v1/datasets/acme/members/rows',
    headers: (t) => bearer(t.bob),
    expect: denied.insufficientAccess,
  },
  {
    name: 'editor with an overview-only token: insufficient_scope',
    path: MEMBERS_METADATA,
    headers: (t) => bearer(t.aliceOverview),
    expect: denied.insufficientScope('data.metadata'),
  },
  {
    name: 'unknown dataset',
    path: '/api/v1/datasets/acme/nothing/metadata',
    headers: (t) => bearer(t.alice),
    expect: denied.notFound,
  },
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
  { name: 'an unknown path without a token', path: '/api/v1/nothing/here', expect: denied.notFound },
  {
    name: 'an unknown path with a revoked token',
    path: '/api/v1/nothing/here',
    headers: (t) => bearer(t.revoked),
    expect: denied.notFound,
  },
  {
    name: 'HEAD without a token',
    method: 'HEAD',
    path: MEMBERS_METADATA,
    expect: { ...denied.missingToken, body: '' },
  },
  {
    name: 'HEAD on a hidden dataset',
    method: 'HEAD',
    path: MEMBERS_METADATA,
    headers: (t) => bearer(t.carol),
    expect: { ...denied.notFound, body: '' },
  },

  // HTTPS and trusted proxies (design §4)
  {
    name: 'plain HTTP from a remote client through the trusted proxy',
    path: OPEN,
    headers: viaProxy('http'),
    expect: denied.httpsRequired,
  },
  {
    name: 'a remote client through the trusted proxy without X-Forwarded-Proto',
    path: OPEN,
    headers: viaProxy(undefined),
    expect: denied.httpsRequired,
  },
  {
    name: 'HTTPS from a remote client through the trusted proxy',
    path: OPEN,
    headers: viaProxy('https'),
    expect: OPEN_OVERVIEW,
  },
  {
    name: 'X-Forwarded-Proto listing http after https',
    path: OPEN,
    headers: viaProxy('https, http'),
    expect: denied.httpsRequired,
  },
  {
    name: 'X-Forwarded-Proto listing https after http',
    path: OPEN,
    headers: viaProxy('http, https'),
    expect: denied.httpsRequired,
  },
  {
    name: 'X-Forwarded-Proto listing https twice',
    path: OPEN,
    headers: viaProxy('https, https'),
    expect: OPEN_OVERVIEW,
  },
  {
    name: 'a garbage X-Forwarded-For entry is not loopback',
    path: OPEN,
    headers: viaProxy(undefined, 'not-an-address'),
    expect: denied.httpsRequired,
  },
  {
    name: 'forwarding headers from an untrusted (loopback) peer are ignored',
    server: 'untrusted',
    path: OPEN,
    headers: viaProxy('http'),
    expect: OPEN_OVERVIEW,
  },

  // Export allow-lists through proxies (design §5)
  {
    name: 'allow-listed client through the trusted proxy',
    path: FENCED_ROWS,
    headers: viaProxy('https', '10.1.2.3'),
    expect: TWO_ROWS,
  },
  {
    name: 'allow-listed client through two trusted hops',
    path: FENCED_ROWS,
    headers: viaProxy('https', '10.1.2.3, 127.0.0.1'),
    expect: TWO_ROWS,
  },
  {
    name: 'allow-listed IPv6 client through the trusted proxy',
    path: FENCED_ROWS,
    headers: viaProxy('https', '2001:db8::7'),
    expect: TWO_ROWS,
  },
  {
    name: 'IPv4-mapped allow-listed client through the trusted proxy',
    path: FENCED_ROWS,
    headers: viaProxy('https', '::ffff:10.1.2.3'),
    expect: TWO_ROWS,
  },
  {
    name: 'client outside the allow-list through the trusted proxy',
    path: FENCED_ROWS,
    headers: viaProxy('https', '10.9.9.9'),
    expect: denied.exportRestricted,
  },
  {
    name: 'a spoofed entry before an untrusted hop',
    path: FENCED_ROWS,
    headers: viaProxy('https', '10.1.2.3, 198.51.100.9'),
    expect: denied.exportRestricted,
  },
  {
    name: 'a spoofed X-Forwarded-For from an untrusted peer',
    server: 'untrusted',
    path: FENCED_ROWS,
    headers: viaProxy('https', '10.1.2.3'),
    expect: denied.exportRestricted,
  },
  {
    name: 'a garbage X-Forwarded-For entry never passes an allow-list',
    path: FENCED_ROWS,
    headers: viaProxy('https', 'garbage'),
    expect: denied.exportRestricted,
  },
  {
    name: 'an address with a port never passes an allow-list',
    path: FENCED_ROWS,
    headers: viaProxy('https', '10.1.2.3:8080'),
    expect: denied.exportRestricted,
  },
  {
    name: 'the proxy itself is not allow-listed',
    path: FENCED_ROWS,
    headers: (t) => bearer(t.alice),
    expect: denied.exportRestricted,
  },
  {
    name: 'allow-lists do not apply to metadata',
    path: '/api/v1/datasets/acme/fenced/metadata',
    headers: viaProxy('https', '10.9.9.9'),
    expect: ok('{"owner":"acme","name":"fenced","tables":["visits"]}'),
  },

  // Export caps: declared size and the streaming meter (design §5)
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

  // The guard sits on the matched route: path tricks never reach the handler unguarded. The target
  // is hidden from carol, so a guarded route and an unmatched path both answer 404, and only a
  // bypass could answer anything else.
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
    (path): ConformanceCase => ({
      name: `path ${path} on a hidden dataset`,
      path,
      headers: (t) => bearer(t.carol),
      expect: denied.notFound,
    }),
  ),
]
