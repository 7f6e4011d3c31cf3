/**
 * THE conformance table: each row is a request and the exact answer every framework must give —
 * status, JSON body (or text), and `WWW-Authenticate` (absent unless given). The visibility matrix
 * rows are generated from design §3's rule, written out here independently of the core:
 * effective = max(public, min(user, scope)); none → 404; short of the need → 403, with
 * `insufficient_scope` when the user's own level would suffice.
 */
import { encodePageToken } from '../../examples/server/api/listing.js'
import { SCOPES as ALL_SCOPES } from '../../src/index.js'
import { generateTokenValue } from '../../src/tokens/token-format.js'
import {
  APP_SECRET,
  matrixDescription,
  matrixName,
  PUBLIC_LEVELS,
  type PublicLevel,
  RS_SECRET,
  SCOPE_TOKENS,
  type ScopeToken,
  TOKEN_VALUES,
  type TokenName,
  TWO_ROWS_BYTES,
  TWO_ROWS_CSV_BYTES,
  USER_LEVELS,
  type UserLevel,
} from './seed.js'

export interface Expected {
  readonly status: number
  /** Parsed JSON, or the exact text for non-JSON bodies. */
  readonly body: unknown
  readonly wwwAuthenticate?: string
}

export interface Case {
  readonly name: string
  readonly method?: string
  readonly path: string
  /** Sends `Authorization: Bearer <value of this token>`. */
  readonly token?: TokenName | 'unknown'
  /** Sends these raw `Authorization` header values instead (one header line each). */
  readonly authorization?: readonly string[]
  readonly headers?: Readonly<Record<string, string>>
  readonly body?: string
  readonly expect: Expected
}

const MESSAGES: Readonly<Record<number, string>> = {
  400: 'Bad request',
  401: 'Invalid credentials',
  403: 'Not authorized',
  404: 'Not found',
}

const denied = (status: number, code: string): Expected => ({
  status,
  body: { error: { status, message: MESSAGES[status], code } },
})
// Every 401 names the API's protected-resource metadata (RFC 9728 §5.1), at the servers' public URL.
const RESOURCE_METADATA =
  'resource_metadata="https://data.example.org/.well-known/oauth-protected-resource/api/v1"'
const MISSING_TOKEN: Expected = {
  ...denied(401, 'missing_token'),
  wwwAuthenticate: `Bearer realm="data-api", ${RESOURCE_METADATA}`,
}
// On a route that names its operation, a 401 also names the scope the route needs (RFC 6750 §3).
const missingToken = (scope: string): Expected => ({
  ...denied(401, 'missing_token'),
  wwwAuthenticate: `Bearer realm="data-api", scope="${scope}", ${RESOURCE_METADATA}`,
})
const invalidToken = (scope: string): Expected => ({
  ...denied(401, 'invalid_token'),
  wwwAuthenticate: `Bearer realm="data-api", error="invalid_token", scope="${scope}", ${RESOURCE_METADATA}`,
})
const INVALID_REQUEST: Expected = {
  ...denied(400, 'invalid_request'),
  wwwAuthenticate: 'Bearer realm="data-api", error="invalid_request"',
}
const insufficientScope = (scope: string): Expected => ({
  ...denied(403, 'insufficient_scope'),
  wwwAuthenticate: `Bearer error="insufficient_scope", scope="${scope}"`,
})
const INSUFFICIENT_ACCESS = denied(403, 'insufficient_access')
const EXPORT_RESTRICTED = denied(403, 'export_restricted')
const HTTPS_REQUIRED = denied(403, 'https_required')
const NOT_FOUND = denied(404, 'not_found')
const badParameter = (detail: string): Expected => ({
  status: 400,
  body: { error: { status: 400, message: 'Bad request', code: 'invalid_parameter', detail } },
})
const BAD_MAX_RESULTS = badParameter('maxResults must be an integer from 1 to 1000')
const ok = (body: unknown, status = 200): Expected => ({ status, body })

const JSON_BODY = { 'content-type': 'application/json' }
const via = (address: string, protocol = 'https') => ({
  'x-forwarded-for': address,
  'x-forwarded-proto': protocol,
})

// ---- the visibility matrix (design §3) ---------------------------------------------------------

type Need = 'overview' | 'metadata' | 'data' | 'edit'

/** Design §3, independently of the core: the answer for public level P, user level U, token S. */
export function matrixAnswer(
  p: PublicLevel,
  u: UserLevel,
  s: ScopeToken,
  need: Need,
  allowed: Expected,
): Expected {
  const rank = (level: string) => (USER_LEVELS as readonly string[]).indexOf(level)
  const ceiling = s === 'public' ? 0 : rank(s)
  const effective = Math.max(rank(p), Math.min(rank(u), ceiling))
  if (effective === 0) return NOT_FOUND
  if (effective >= rank(need)) return allowed
  return rank(u) >= rank(need) ? insufficientScope(`data.${need}`) : INSUFFICIENT_ACCESS
}

const SCOPES = Object.keys(SCOPE_TOKENS) as ScopeToken[]
const MATRIX = PUBLIC_LEVELS.flatMap((p) => USER_LEVELS.map((u) => ({ p, u, name: matrixName(p, u) })))

const matrixCases: Case[] = SCOPES.flatMap((s) =>
  MATRIX.flatMap(({ p, u, name }): Case[] => {
    const base = `/api/v1/datasets/lab/${name}`
    const overview = { owner: 'lab', name, description: matrixDescription(p, u) }
    const title = `matrix P=${p} U=${u} S=${s}`
    return [
      {
        name: `${title}: overview`,
        path: base,
        token: s,
        expect: matrixAnswer(p, u, s, 'overview', ok(overview)),
      },
      {
        name: `${title}: metadata`,
        path: `${base}/metadata`,
        token: s,
        expect: matrixAnswer(
          p,
          u,
          s,
          'metadata',
          ok({ tables: [{ name: 't', variables: [{ name: 'id', type: 'integer' }], numRows: 2 }] }),
        ),
      },
      {
        name: `${title}: table rows`,
        path: `${base}/tables/t/rows`,
        token: s,
        expect: matrixAnswer(p, u, s, 'data', ok({ rows: [[1], [2]] })),
      },
      {
        // The description is written back unchanged, so the matrix rows stay independent.
        name: `${title}: update`,
        method: 'PATCH',
        path: base,
        token: s,
        headers: JSON_BODY,
        body: JSON.stringify({ description: overview.description }),
        expect: matrixAnswer(p, u, s, 'edit', ok(overview)),
      },
    ]
  }),
)

// ---- the listing filter: listed iff the overview is allowed -------------------------------------

const visibleTo = (s: ScopeToken) =>
  MATRIX.filter(({ p, u }) => matrixAnswer(p, u, s, 'overview', ok(null)).status === 200)
    .map(({ p, u, name }) => ({ owner: 'lab', name, description: matrixDescription(p, u), publicLevel: p }))
    .sort((a, b) => (a.name < b.name ? -1 : 1))

const listingCases: Case[] = SCOPES.map((s) => ({
  name: `listing filter with S=${s}`,
  path: '/api/v1/organizations/lab/datasets?maxResults=1000',
  token: s,
  expect: ok({ results: visibleTo(s), nextPageToken: null }),
}))

const seenWithData = visibleTo('data')
const pagingCases: Case[] = [
  {
    name: 'listing: first page of 2',
    path: '/api/v1/organizations/lab/datasets?maxResults=2',
    token: 'data',
    expect: ok({
      results: seenWithData.slice(0, 2),
      nextPageToken: encodePageToken('lab', seenWithData[1]!.name),
    }),
  },
  {
    name: 'listing: second page from the page token',
    path: `/api/v1/organizations/lab/datasets?maxResults=2&pageToken=${encodePageToken('lab', seenWithData[1]!.name)}`,
    token: 'data',
    expect: ok({
      results: seenWithData.slice(2, 4),
      nextPageToken: encodePageToken('lab', seenWithData[3]!.name),
    }),
  },
  {
    name: 'listing: maxResults in a JSON body on GET (the contract example)',
    path: '/api/v1/organizations/lab/datasets',
    token: 'data',
    headers: JSON_BODY,
    body: '{"maxResults": 1}',
    expect: ok({
      results: seenWithData.slice(0, 1),
      nextPageToken: encodePageToken('lab', seenWithData[0]!.name),
    }),
  },
  {
    name: 'listing: maxResults in a chunked JSON body on GET',
    path: '/api/v1/organizations/lab/datasets',
    token: 'data',
    headers: { ...JSON_BODY, 'transfer-encoding': 'chunked' },
    body: '{"maxResults": 1}',
    expect: ok({
      results: seenWithData.slice(0, 1),
      nextPageToken: encodePageToken('lab', seenWithData[0]!.name),
    }),
  },
  {
    name: 'listing: the default page holds everything here',
    path: '/api/v1/organizations/lab/datasets',
    token: 'data',
    expect: ok({ results: seenWithData, nextPageToken: null }),
  },
  {
    name: "listing: a user's datasets, hidden ones left out",
    path: '/api/v1/users/owner/datasets',
    token: 'data',
    expect: ok({
      results: [{ owner: 'owner', name: 'o-open', description: 'open', publicLevel: 'overview' }],
      nextPageToken: null,
    }),
  },
  {
    name: 'listing: unknown organization',
    path: '/api/v1/organizations/nope/datasets',
    token: 'data',
    expect: NOT_FOUND,
  },
  {
    name: 'listing: a user on the organizations path',
    path: '/api/v1/organizations/owner/datasets',
    token: 'data',
    expect: NOT_FOUND,
  },
  {
    name: 'listing: an organization on the users path',
    path: '/api/v1/users/lab/datasets',
    token: 'data',
    expect: NOT_FOUND,
  },
  { name: 'listing: no token', path: '/api/v1/organizations/lab/datasets', expect: MISSING_TOKEN },
  {
    name: 'listing: a page token of another listing',
    path: `/api/v1/organizations/lab/datasets?pageToken=${encodePageToken('vault', 'x')}`,
    token: 'data',
    expect: badParameter('pageToken is not a page token of this listing'),
  },
  {
    name: 'listing: maxResults in the query and the body',
    path: '/api/v1/organizations/lab/datasets?maxResults=1',
    token: 'data',
    headers: JSON_BODY,
    body: '{"maxResults": 1}',
    expect: badParameter('maxResults must be given in the query or the body, not both'),
  },
  ...['0', '1001', '1.5', 'abc', '', '-1', '1e2'].map(
    (value): Case => ({
      name: `listing: maxResults=${JSON.stringify(value)}`,
      path: `/api/v1/organizations/lab/datasets?maxResults=${value}`,
      token: 'data',
      expect: BAD_MAX_RESULTS,
    }),
  ),
  ...['{"maxResults": 0}', '{"maxResults": "5"}', '{"maxResults": 2.5}', 'maxResults=5', '[]', '{'].map(
    (body): Case => ({
      name: `listing: body ${body}`,
      path: '/api/v1/organizations/lab/datasets',
      token: 'data',
      headers: JSON_BODY,
      body,
      expect: BAD_MAX_RESULTS,
    }),
  ),
]

// ---- export restrictions: caps at N and N+1, allow-lists through a trusted proxy ----------------

const vault = '/api/v1/datasets/vault'
const exportTable = (dataset: string, headers: Record<string, string> = {}) => ({
  method: 'POST',
  path: `${vault}/${dataset}/exports`,
  token: 'data' as const,
  headers: { ...JSON_BODY, ...headers },
  body: '{"table":"t"}',
})

const exportCases: Case[] = [
  {
    name: 'cap: 3 records of maxRecords 3',
    path: `${vault}/cap-records/tables/t/rows?maxResults=3`,
    token: 'data',
    expect: ok({ rows: [[1], [2], [3]] }),
  },
  {
    name: 'cap: 4 records of maxRecords 3',
    path: `${vault}/cap-records/tables/t/rows?maxResults=4`,
    token: 'data',
    expect: EXPORT_RESTRICTED,
  },
  {
    name: 'cap: exporting 5 records of maxRecords 3',
    ...exportTable('cap-records'),
    expect: EXPORT_RESTRICTED,
  },
  {
    name: `cap: ${TWO_ROWS_BYTES} bytes of maxBytes ${TWO_ROWS_BYTES}`,
    path: `${vault}/cap-bytes/tables/t/rows?maxResults=2`,
    token: 'data',
    expect: ok({ rows: [[1], [2]] }),
  },
  {
    name: 'cap: 3 rows, past maxBytes',
    path: `${vault}/cap-bytes/tables/t/rows?maxResults=3`,
    token: 'data',
    expect: EXPORT_RESTRICTED,
  },
  {
    name: `cap: ${TWO_ROWS_BYTES} bytes of maxBytes ${TWO_ROWS_BYTES - 1}`,
    path: `${vault}/cap-bytes-less/tables/t/rows?maxResults=2`,
    token: 'data',
    expect: EXPORT_RESTRICTED,
  },
  {
    name: 'cap: 1 row, within maxBytes',
    path: `${vault}/cap-bytes-less/tables/t/rows?maxResults=1`,
    token: 'data',
    expect: ok({ rows: [[1]] }),
  },
  {
    name: `cap: a ${TWO_ROWS_CSV_BYTES}-byte CSV export of maxBytes ${TWO_ROWS_CSV_BYTES}`,
    ...exportTable('cap-csv'),
    expect: ok('id\r\n1\r\n2\r\n'),
  },
  {
    name: `cap: a ${TWO_ROWS_CSV_BYTES}-byte CSV export of maxBytes ${TWO_ROWS_CSV_BYTES - 1}`,
    ...exportTable('cap-csv-less'),
    expect: EXPORT_RESTRICTED,
  },
  {
    name: 'cap: maxRecords 0 blocks every export',
    path: `${vault}/cap-zero/tables/t/rows?maxResults=1`,
    token: 'data',
    expect: EXPORT_RESTRICTED,
  },
  {
    name: 'cap: restrictions never apply to metadata',
    path: `${vault}/cap-zero/metadata`,
    token: 'data',
    expect: ok({ tables: [{ name: 't', variables: [{ name: 'id', type: 'integer' }], numRows: 1 }] }),
  },
  {
    name: 'ips: the loopback client is not on the list',
    path: `${vault}/ips/tables/t/rows`,
    token: 'data',
    expect: EXPORT_RESTRICTED,
  },
  {
    name: 'ips: metadata from a client not on the list',
    path: `${vault}/ips/metadata`,
    token: 'data',
    headers: via('192.0.2.1'),
    expect: ok({ tables: [{ name: 't', variables: [{ name: 'id', type: 'integer' }], numRows: 1 }] }),
  },
  ...(
    [
      ['10.1.2.3', ok({ rows: [[1]] })],
      ['10.2.0.1', EXPORT_RESTRICTED],
      ['::ffff:10.1.2.3', ok({ rows: [[1]] })],
      ['2001:db8::5', ok({ rows: [[1]] })],
      ['2001:db9::5', EXPORT_RESTRICTED],
      ['10.1.2.3, 127.0.0.1', ok({ rows: [[1]] })],
      ['10.1.2.3, 192.0.2.1', EXPORT_RESTRICTED],
      ['10.1.2.3:8080', EXPORT_RESTRICTED],
      ['010.1.2.3', EXPORT_RESTRICTED],
      ['not-an-address', EXPORT_RESTRICTED],
    ] as const
  ).map(
    ([forwardedFor, expect]): Case => ({
      name: `ips: X-Forwarded-For ${forwardedFor} through the trusted proxy`,
      path: `${vault}/ips/tables/t/rows`,
      token: 'data',
      headers: via(forwardedFor),
      expect,
    }),
  ),
  {
    name: 'ips: a CSV export for a listed client',
    ...exportTable('ips', via('10.1.9.9')),
    expect: ok('id\r\n1\r\n'),
  },
  {
    name: 'https: plain HTTP from a forwarded client',
    path: `${vault}/ips/metadata`,
    token: 'data',
    headers: via('203.0.113.9', 'http'),
    expect: HTTPS_REQUIRED,
  },
  {
    name: 'https: X-Forwarded-Proto is case-insensitive (HTTPS)',
    path: `${vault}/ips/metadata`,
    token: 'data',
    headers: via('10.1.9.9', 'HTTPS'),
    expect: ok({ tables: [{ name: 't', variables: [{ name: 'id', type: 'integer' }], numRows: 1 }] }),
  },
  {
    name: 'https: plain HTTP from a forwarded client, without credentials',
    path: `${vault}/ips/metadata`,
    headers: via('203.0.113.9', 'http'),
    expect: HTTPS_REQUIRED,
  },
  {
    name: 'https: a forwarded client without X-Forwarded-Proto',
    path: `${vault}/ips/metadata`,
    token: 'data',
    headers: { 'x-forwarded-for': '203.0.113.9' },
    expect: HTTPS_REQUIRED,
  },
  {
    name: 'https: a garbage X-Forwarded-For entry is no loopback client',
    path: `${vault}/ips/metadata`,
    token: 'data',
    headers: { 'x-forwarded-for': 'not-an-address' },
    expect: HTTPS_REQUIRED,
  },
  // Every hop must have said https: a list naming http anywhere is plain HTTP.
  ...(
    [
      ['https, http', HTTPS_REQUIRED],
      ['http, https', HTTPS_REQUIRED],
      [
        'https, https',
        ok({ tables: [{ name: 't', variables: [{ name: 'id', type: 'integer' }], numRows: 1 }] }),
      ],
    ] as const
  ).map(
    ([proto, expect]): Case => ({
      name: `https: X-Forwarded-Proto ${proto}`,
      path: `${vault}/ips/metadata`,
      token: 'data',
      headers: via('203.0.113.9', proto),
      expect,
    }),
  ),
]

// ---- bearer tokens (RFC 6750, design §4) --------------------------------------------------------

const open = '/api/v1/datasets/lab/m-data-none'
const OPEN = ok({ owner: 'lab', name: 'm-data-none', description: matrixDescription('data', 'none') })

const bearerCases: Case[] = [
  { name: 'bearer: no Authorization header', path: open, expect: missingToken('data.overview') },
  {
    name: 'bearer: another scheme',
    path: open,
    authorization: ['Basic dTpw'],
    expect: missingToken('data.overview'),
  },
  {
    name: 'bearer: BearerX is another scheme',
    path: open,
    authorization: ['BearerX abc'],
    expect: missingToken('data.overview'),
  },
  { name: 'bearer: the scheme alone', path: open, authorization: ['Bearer'], expect: INVALID_REQUEST },
  { name: 'bearer: an empty header', path: open, authorization: [''], expect: INVALID_REQUEST },
  {
    name: 'bearer: a tab instead of a space',
    path: open,
    authorization: ['Bearer\tabc'],
    expect: INVALID_REQUEST,
  },
  {
    name: 'bearer: something after the token',
    path: open,
    authorization: ['Bearer abc def'],
    expect: INVALID_REQUEST,
  },
  {
    name: 'bearer: two Authorization headers',
    path: open,
    authorization: ['Bearer abc', 'Bearer abc'],
    expect: INVALID_REQUEST,
  },
  {
    name: 'bearer: a no-break space instead of a space',
    path: open,
    authorization: [`Bearer\u00a0${TOKEN_VALUES.public}`],
    expect: INVALID_REQUEST,
  },
  {
    name: 'bearer: a comma after a token',
    path: open,
    authorization: [`Bearer ${TOKEN_VALUES.revoked},`],
    expect: INVALID_REQUEST,
  },
  // `=` is token68 padding and trailing white space is the header's own: the token is then looked
  // up (and this one is revoked).
  {
    name: 'bearer: = after a token',
    path: open,
    authorization: [`Bearer ${TOKEN_VALUES.revoked}=`],
    expect: invalidToken('data.overview'),
  },
  {
    name: 'bearer: white space after a token',
    path: open,
    authorization: [`Bearer ${TOKEN_VALUES.revoked} `],
    expect: invalidToken('data.overview'),
  },
  {
    name: 'bearer: a lower-case scheme',
    path: open,
    authorization: [`bearer ${TOKEN_VALUES.public}`],
    expect: OPEN,
  },
  {
    name: 'bearer: several spaces after the scheme',
    path: open,
    authorization: [`Bearer   ${TOKEN_VALUES.public}`],
    expect: OPEN,
  },
  {
    name: 'bearer: a Basic header, then a Bearer header',
    path: open,
    authorization: ['Basic dTpw', `Bearer ${TOKEN_VALUES.public}`],
    expect: INVALID_REQUEST,
  },
  {
    name: 'bearer: a token far longer than the format',
    path: open,
    authorization: [`Bearer ${'a'.repeat(4000)}`],
    expect: invalidToken('data.overview'),
  },
  {
    name: 'bearer: a malformed token value',
    path: open,
    authorization: [`Bearer dap_${'A'.repeat(38)}`],
    expect: invalidToken('data.overview'),
  },
  {
    name: 'bearer: a well-formed unknown token',
    path: open,
    token: 'unknown',
    expect: invalidToken('data.overview'),
  },
  { name: 'bearer: an expired token', path: open, token: 'expired', expect: invalidToken('data.overview') },
  { name: 'bearer: a revoked token', path: open, token: 'revoked', expect: invalidToken('data.overview') },
  { name: 'bearer: the public token reads public data', path: open, token: 'public', expect: OPEN },
  {
    name: 'bearer: access_token in the query only',
    path: `${open}?access_token=abc`,
    expect: missingToken('data.overview'),
  },
  {
    name: 'bearer: access_token in the query and the header',
    path: `${open}?access_token=abc`,
    token: 'public',
    expect: INVALID_REQUEST,
  },
  {
    name: 'bearer: a percent-encoded access_token name in the query and the header',
    path: `${open}?access%5Ftoken=abc`,
    token: 'public',
    expect: INVALID_REQUEST,
  },
  {
    // Two places is refused before the header's token is looked up.
    name: 'bearer: access_token in the query and an unknown token in the header',
    path: `${open}?access_token=abc`,
    token: 'unknown',
    expect: INVALID_REQUEST,
  },
  {
    name: 'bearer: access_token in the JSON body and the header',
    method: 'PATCH',
    path: '/api/v1/datasets/lab/m-none-edit',
    token: 'edit',
    headers: JSON_BODY,
    body: '{"description":"x","access_token":"abc"}',
    expect: INVALID_REQUEST,
  },
  {
    name: 'bearer: access_token in a form body and the header',
    method: 'POST',
    path: `${open}/exports`,
    token: 'public',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: 'table=t&access_token=abc',
    expect: INVALID_REQUEST,
  },
  {
    name: 'bearer: access_token in a form body only',
    method: 'POST',
    path: `${open}/exports`,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: 'table=t&access_token=abc',
    expect: missingToken('data.data'),
  },
  ...bodyTokenCases(),
]

// Design §4: a token in the header and an `access_token` in a form or JSON body is 400 on EVERY API
// route, whether or not its handler reads the body (the versions, runs and plain GET routes do
// not). Each caller is one the route admits, so the body parameter is the only thing wrong; a
// version or a run that were wrongly served would also shift the numbers later rows expect.
function bodyTokenCases(): Case[] {
  const FORM = { 'content-type': 'application/x-www-form-urlencoded' }
  const routes: readonly (readonly [string, string, string, TokenName])[] = [
    ['listing of an organization', 'GET', '/api/v1/organizations/lab/datasets', 'data'],
    ['listing of a user', 'GET', '/api/v1/users/owner/datasets', 'data'],
    ['overview', 'GET', open, 'public'],
    ['update', 'PATCH', '/api/v1/datasets/lab/m-none-edit', 'edit'],
    ['metadata', 'GET', `${open}/metadata`, 'public'],
    ['rows', 'GET', `${open}/tables/t/rows`, 'public'],
    ['export', 'POST', `${open}/exports`, 'public'],
    ['version release', 'POST', '/api/v1/datasets/lab/m-none-edit/versions', 'edit'],
    ['workflow read', 'GET', '/api/v1/workflows/lab/wf-public', 'public'],
    ['workflow run', 'POST', '/api/v1/workflows/lab/wf-write/runs', 'wfwrite'],
    ['organization read', 'GET', '/api/v1/organizations/lab', 'admin-read'],
    ['member status', 'PATCH', '/api/v1/organizations/lab/members/member', 'admin-write'],
  ]
  const perRoute = routes.flatMap(([route, method, path, token]): Case[] => [
    {
      name: `body access_token: ${route}, ${method} with a form body`,
      method,
      path,
      token,
      headers: FORM,
      body: 'access_token=abc',
      expect: INVALID_REQUEST,
    },
    {
      name: `body access_token: ${route}, ${method} with a JSON body`,
      method,
      path,
      token,
      headers: JSON_BODY,
      body: '{"access_token":"abc"}',
      expect: INVALID_REQUEST,
    },
  ])
  const overview = (name: string, headers: Record<string, string>, body: string, expect: Expected): Case => ({
    name: `body access_token: overview, ${name}`,
    path: open,
    token: 'public',
    headers,
    body,
    expect,
  })
  return [
    ...perRoute,
    overview(
      'a JSON type with parameters',
      { 'content-type': 'Application/JSON; charset=utf-8' },
      '{"access_token":1}',
      INVALID_REQUEST,
    ),
    overview(
      'a +json type',
      { 'content-type': 'application/merge-patch+json' },
      '{"access_token":"abc"}',
      INVALID_REQUEST,
    ),
    overview('a percent-encoded form field name', FORM, 'x=1&access%5Ftoken=abc', INVALID_REQUEST),
    overview('an empty form field', FORM, 'access_token=', INVALID_REQUEST),
    // Only form and JSON bodies carry parameters; a body that does not parse as its type says
    // carries none, and neither does a key below the top level.
    overview(
      'the JSON of a text/plain body',
      { 'content-type': 'text/plain' },
      '{"access_token":"abc"}',
      OPEN,
    ),
    overview('a body without a content type', {}, 'access_token=abc', OPEN),
    overview('a JSON body that does not parse', JSON_BODY, '{"access_token":', OPEN),
    overview('a JSON array', JSON_BODY, '[{"access_token":"abc"}]', OPEN),
    overview('a nested JSON key', JSON_BODY, '{"x":{"access_token":"abc"}}', OPEN),
    overview('a form field of another name', FORM, 'access_tokens=abc&xaccess_token=abc', OPEN),
  ]
}

// ---- other routes: workflows, organizations, edits -----------------------------------------------

const edit = '/api/v1/datasets/lab/m-none-edit'
const routeCases: Case[] = [
  {
    name: 'versions: release',
    method: 'POST',
    path: `${edit}/versions`,
    token: 'edit',
    expect: ok({ version: 1 }, 201),
  },
  {
    name: 'versions: release again',
    method: 'POST',
    path: `${edit}/versions`,
    token: 'edit',
    expect: ok({ version: 2 }, 201),
  },
  {
    name: 'versions: needs data.edit',
    method: 'POST',
    path: `${edit}/versions`,
    token: 'data',
    expect: insufficientScope('data.edit'),
  },
  {
    name: 'update: a body without a description',
    method: 'PATCH',
    path: edit,
    token: 'edit',
    headers: JSON_BODY,
    body: '{"title":"x"}',
    expect: badParameter('the body must be {"description": text of at most 10000 characters}'),
  },
  {
    name: 'update: a body past 64 KiB',
    method: 'PATCH',
    path: edit,
    token: 'edit',
    headers: JSON_BODY,
    body: JSON.stringify({ description: 'x'.repeat(70_000) }),
    expect: {
      status: 413,
      body: {
        error: {
          status: 413,
          message: 'Payload too large',
          code: 'body_too_large',
          detail: 'the body must be at most 65536 bytes',
        },
      },
    },
  },
  {
    name: 'rows: an unknown table after the guard',
    path: `${open}/tables/nope/rows`,
    token: 'data',
    expect: NOT_FOUND,
  },
  {
    name: 'rows: an unknown table of a hidden dataset',
    path: '/api/v1/datasets/lab/m-none-none/tables/nope/rows',
    token: 'data',
    expect: NOT_FOUND,
  },
  {
    name: 'rows: maxResults=0',
    path: `${open}/tables/t/rows?maxResults=0`,
    token: 'data',
    expect: BAD_MAX_RESULTS,
  },
  {
    name: 'rows: maxResults=1001',
    path: `${open}/tables/t/rows?maxResults=1001`,
    token: 'data',
    expect: BAD_MAX_RESULTS,
  },
  {
    name: 'rows: maxResults=1',
    path: `${open}/tables/t/rows?maxResults=1`,
    token: 'public',
    expect: ok({ rows: [[1]] }),
  },
  {
    name: 'export: a whole public table',
    ...exportTable('x'),
    path: `${open}/exports`,
    expect: ok('id\r\n1\r\n2\r\n'),
  },
  {
    name: 'export: an unknown table',
    ...exportTable('x'),
    path: `${open}/exports`,
    body: '{"table":"nope"}',
    expect: NOT_FOUND,
  },
  {
    name: 'export: no table named',
    ...exportTable('x'),
    path: `${open}/exports`,
    body: '{}',
    expect: badParameter('the body must be {"table": "<table name>"}'),
  },
  { name: 'dataset: unknown', path: '/api/v1/datasets/lab/nope', token: 'edit', expect: NOT_FOUND },
  {
    name: 'workflow: read a hidden one with wokflow.read',
    path: '/api/v1/workflows/lab/wf-hidden',
    token: 'wfread',
    expect: ok({ owner: 'lab', name: 'wf-hidden' }),
  },
  {
    name: 'workflow: a hidden one without the scope',
    path: '/api/v1/workflows/lab/wf-hidden',
    token: 'data',
    expect: NOT_FOUND,
  },
  {
    name: 'workflow: a public one with the public token',
    path: '/api/v1/workflows/lab/wf-public',
    token: 'public',
    expect: ok({ owner: 'lab', name: 'wf-public' }),
  },
  {
    name: 'workflow: run with workflow.write',
    method: 'POST',
    path: '/api/v1/workflows/lab/wf-write/runs',
    token: 'wfwrite',
    expect: ok({ run: { id: 'run-1', status: 'queued' } }, 202),
  },
  {
    name: 'workflow: run with wokflow.read only',
    method: 'POST',
    path: '/api/v1/workflows/lab/wf-write/runs',
    token: 'wfread',
    expect: insufficientScope('workflow.write'),
  },
  {
    name: 'workflow: run where the user may only read',
    method: 'POST',
    path: '/api/v1/workflows/lab/wf-hidden/runs',
    token: 'wfwrite',
    expect: INSUFFICIENT_ACCESS,
  },
  { name: 'workflow: unknown', path: '/api/v1/workflows/lab/nope', token: 'wfread', expect: NOT_FOUND },
  {
    name: 'organization: an admin with organization.read',
    path: '/api/v1/organizations/lab',
    token: 'admin-read',
    expect: ok({
      handle: 'lab',
      admins: ['admin'],
      members: [
        { user: 'member', status: 'approved' },
        { user: 'u', status: 'approved' },
      ],
    }),
  },
  {
    name: 'organization: an admin without the scope',
    path: '/api/v1/organizations/lab',
    token: 'admin-data',
    expect: insufficientScope('organization.read'),
  },
  {
    name: 'organization: a member who is no admin',
    path: '/api/v1/organizations/lab',
    token: 'member-org',
    expect: INSUFFICIENT_ACCESS,
  },
  {
    name: 'organization: unknown',
    path: '/api/v1/organizations/nope',
    token: 'admin-read',
    expect: NOT_FOUND,
  },
  {
    name: 'organization: a user handle',
    path: '/api/v1/organizations/u',
    token: 'admin-read',
    expect: NOT_FOUND,
  },
  {
    name: 'organization: approve a member',
    method: 'PATCH',
    path: '/api/v1/organizations/lab/members/member',
    token: 'admin-write',
    headers: JSON_BODY,
    body: '{"status":"pending"}',
    expect: ok({ user: 'member', status: 'pending' }),
  },
  {
    name: 'organization: member status needs organization.write',
    method: 'PATCH',
    path: '/api/v1/organizations/lab/members/member',
    token: 'admin-read',
    headers: JSON_BODY,
    body: '{"status":"approved"}',
    expect: insufficientScope('organization.write'),
  },
  {
    name: 'organization: a bad status',
    method: 'PATCH',
    path: '/api/v1/organizations/lab/members/member',
    token: 'admin-write',
    headers: JSON_BODY,
    body: '{"status":"banned"}',
    expect: badParameter('the body must be {"status": "pending" | "approved" | "rejected"}'),
  },
  {
    name: 'organization: an unknown member',
    method: 'PATCH',
    path: '/api/v1/organizations/lab/members/ghost',
    token: 'admin-write',
    headers: JSON_BODY,
    body: '{"status":"approved"}',
    expect: NOT_FOUND,
  },
]

// ---- path bypasses: never a handler, whatever the token ------------------------------------------

const bypassCases: Case[] = [
  // An unmatched path is 404 before any token is looked at: a revoked one is not even 401.
  {
    name: 'bypass: /api/v1/nope with a revoked token',
    path: '/api/v1/nope',
    token: 'revoked',
    expect: NOT_FOUND,
  },
  ...[
    '/API/v1/datasets/lab/m-data-none',
    '/api/V1/datasets/lab/m-data-none',
    '/%61pi/v1/datasets/lab/m-data-none',
    '/api/v1/datasets/lab/m-data-%6eone',
    '/api/v1/datasets/lab/m-data-none/',
    '/api/v1/datasets/lab/m-data-none/metadata/',
    '/api/v1/datasets/lab/x/../m-data-none',
    '/api/v1/datasets/lab/./m-data-none',
    '/api/v1/datasets/lab/m-data-none/metadata/..',
    '/api//v1/datasets/lab/m-data-none',
    '/api/v1/datasets/lab/m-data-none%2Fmetadata',
    '/api/v1/datasets/lab/m-data-none;metadata',
    '/api/v1/datasets/lab',
    '/api/v1/nope',
    '/',
  ].flatMap((path): Case[] => [
    { name: `bypass: ${path} with a token`, path, token: 'edit', expect: NOT_FOUND },
    { name: `bypass: ${path} without one`, path, expect: NOT_FOUND },
  ]),
]

const methodCases: Case[] = [
  { name: 'method: DELETE is no route', method: 'DELETE', path: open, token: 'edit', expect: NOT_FOUND },
  { name: 'method: OPTIONS is no route', method: 'OPTIONS', path: open, expect: NOT_FOUND },
  { name: 'method: PUT is no route', method: 'PUT', path: open, token: 'edit', expect: NOT_FOUND },
]

// Design §10: one answer on every framework, for input a framework might judge before the routes
// do (issue 17): content types Fastify cannot parse, and path segments past its 100-character
// default, which it used to answer with a 500 and its own 414.
const NOT_A_FORM: Expected = {
  status: 400,
  body: {
    error: 'invalid_request',
    error_description: 'the request body must be application/x-www-form-urlencoded or application/json',
  },
}
const malformedInputCases: Case[] = [
  ...['', ';;;', 'a/b/c', 'text/pl\u00e9in', 'application/x-www-form-urlencoded;;=;'].map(
    (contentType): Case => ({
      name: `malformed content type: ${JSON.stringify(contentType)} on the token endpoint`,
      method: 'POST',
      path: '/oauth/token',
      headers: { 'content-type': JSON.parse(`"${contentType}"`) as string },
      body: 'grant_type=refresh_token&refresh_token=x&client_id=nobody',
      expect: contentType.startsWith('application/x-www-form-urlencoded')
        ? {
            status: 401,
            body: { error: 'invalid_client', error_description: 'unknown client' },
            wwwAuthenticate: 'Basic realm="oauth"',
          }
        : NOT_A_FORM,
    }),
  ),
  {
    name: 'malformed content type: an API route with a JSON body answers as usual',
    method: 'PATCH',
    path: '/api/v1/datasets/lab/m-none-edit',
    token: 'edit',
    headers: { 'content-type': 'a/b/c' },
    body: '{"description":"patched past a malformed content type"}',
    expect: ok({ owner: 'lab', name: 'm-none-edit', description: 'patched past a malformed content type' }),
  },
  {
    name: 'long path segment: a 101-character dataset name is not found',
    path: `/api/v1/datasets/lab/${'n'.repeat(101)}`,
    token: 'edit',
    expect: NOT_FOUND,
  },
  {
    name: 'long path segment: a 5,000-character dataset name without a token',
    path: `/api/v1/datasets/lab/${'n'.repeat(5000)}/metadata`,
    expect: missingToken('data.metadata'),
  },
]

// ---- discovery, revocation and introspection (issue 28): RFC-shaped on every framework ----------

const ORIGIN = 'https://data.example.org'
const FORM = { 'content-type': 'application/x-www-form-urlencoded' }
const basicOf = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`
const APP = [basicOf('app', APP_SECRET)]
const RS = [basicOf('rs', RS_SECRET)]
const oauthError = (status: number, error: string, description: string, challenge = false): Expected => ({
  status,
  body: { error, error_description: description },
  ...(challenge && { wwwAuthenticate: 'Basic realm="oauth"' }),
})
const OVERSIZED = `token=${'x'.repeat(70 * 1024)}`
const TOO_LARGE = oauthError(413, 'invalid_request', 'the request body is larger than 65536 bytes')
const CLIENT_SECRET_METHODS = ['client_secret_basic', 'client_secret_post']
// A well-formed OAuth access token that no server issued (the seed's tokens are all API tokens).
const UNKNOWN_OAUTH_TOKEN = generateTokenValue('oauth')

const discoveryCases: Case[] = [
  {
    name: 'discovery: /.well-known/oauth-authorization-server (RFC 8414)',
    path: '/.well-known/oauth-authorization-server',
    expect: ok({
      issuer: ORIGIN,
      authorization_endpoint: `${ORIGIN}/oauth/authorize`,
      token_endpoint: `${ORIGIN}/oauth/token`,
      device_authorization_endpoint: `${ORIGIN}/oauth/device_authorization`,
      revocation_endpoint: `${ORIGIN}/oauth/revoke`,
      introspection_endpoint: `${ORIGIN}/oauth/introspect`,
      registration_endpoint: `${ORIGIN}/oauth/register`,
      client_id_metadata_document_supported: true,
      scopes_supported: ALL_SCOPES,
      response_types_supported: ['code'],
      response_modes_supported: ['query'],
      grant_types_supported: [
        'authorization_code',
        'refresh_token',
        'urn:ietf:params:oauth:grant-type:device_code',
      ],
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['none', ...CLIENT_SECRET_METHODS],
      revocation_endpoint_auth_methods_supported: ['none', ...CLIENT_SECRET_METHODS],
      introspection_endpoint_auth_methods_supported: CLIENT_SECRET_METHODS,
      authorization_response_iss_parameter_supported: true,
      protected_resources: [`${ORIGIN}/api/v1`, `${ORIGIN}/mcp`],
      dpop_signing_alg_values_supported: ['ES256', 'EdDSA', 'Ed25519', 'RS256', 'PS256'],
    }),
  },
  {
    name: 'discovery: /.well-known/oauth-protected-resource/api/v1 (RFC 9728)',
    path: '/.well-known/oauth-protected-resource/api/v1',
    expect: ok({
      resource: `${ORIGIN}/api/v1`,
      authorization_servers: [ORIGIN],
      scopes_supported: ALL_SCOPES,
      bearer_methods_supported: ['header'],
    }),
  },
  {
    name: 'discovery: /.well-known/oauth-protected-resource (RFC 9728)',
    path: '/.well-known/oauth-protected-resource',
    expect: ok({
      resource: ORIGIN,
      authorization_servers: [ORIGIN],
      scopes_supported: ALL_SCOPES,
      bearer_methods_supported: ['header'],
    }),
  },
  {
    name: 'discovery: a path-inserted location of another issuer is not found',
    path: '/.well-known/oauth-authorization-server/other',
    expect: NOT_FOUND,
  },
]

/** One POST to an OAuth endpoint, as a form unless `headers` says otherwise. */
const post = (
  name: string,
  path: string,
  body: string,
  expect: Expected,
  extra: { readonly authorization?: readonly string[]; readonly headers?: Record<string, string> } = {},
): Case => ({
  name,
  method: 'POST',
  path,
  headers: extra.headers ?? FORM,
  body,
  expect,
  ...(extra.authorization !== undefined && { authorization: extra.authorization }),
})

const revocationCases: Case[] = [
  post(
    'revoke: an unknown token is 200 (RFC 7009 §2.2)',
    '/oauth/revoke',
    `token=${UNKNOWN_OAUTH_TOKEN}`,
    ok({}),
    {
      authorization: APP,
    },
  ),
  post('revoke: a public client names itself', '/oauth/revoke', 'token=whatever&client_id=pub', ok({})),
  post(
    'revoke: a JSON body',
    '/oauth/revoke',
    '{"token":"whatever","token_type_hint":"refresh_token"}',
    ok({}),
    { authorization: APP, headers: JSON_BODY },
  ),
  post(
    'revoke: an API token is unsupported_token_type (RFC 7009 §2.2.1), and stays valid',
    '/oauth/revoke',
    `token=${TOKEN_VALUES.data}`,
    oauthError(
      400,
      'unsupported_token_type',
      'API tokens are revoked by their owner in the token settings, not by a client',
    ),
    { authorization: APP },
  ),
  // Only a working API token is refused: one that no longer works is a dead token like any other.
  ...(['unknown', 'expired', 'revoked'] as const).map((token) =>
    post(
      `revoke: ${token === 'unknown' ? 'an unknown' : `an ${token}`} API token answers 200 (RFC 7009 §2.2)`,
      '/oauth/revoke',
      `token=${TOKEN_VALUES[token]}`,
      ok({}),
      { authorization: APP },
    ),
  ),
  {
    name: 'revoke: the API token refused above still works',
    path: '/api/v1/datasets/lab/m-none-data/metadata',
    token: 'data',
    expect: ok({ tables: [{ name: 't', numRows: 2, variables: [{ name: 'id', type: 'integer' }] }] }),
  },
  post(
    'revoke: a missing token',
    '/oauth/revoke',
    'token_type_hint=access_token',
    oauthError(400, 'invalid_request', 'token is required'),
    { authorization: APP },
  ),
  post(
    'revoke: a wrong client secret',
    '/oauth/revoke',
    'token=whatever',
    oauthError(401, 'invalid_client', 'client authentication failed', true),
    { authorization: [basicOf('app', 'wrong')] },
  ),
  post(
    'revoke: an unknown client',
    '/oauth/revoke',
    'token=whatever&client_id=nobody',
    oauthError(401, 'invalid_client', 'unknown client', true),
  ),
  post(
    'revoke: a confidential client without its secret',
    '/oauth/revoke',
    'token=whatever&client_id=app',
    oauthError(401, 'invalid_client', 'client authentication is required', true),
  ),
  post('revoke: a body that is not a form or JSON', '/oauth/revoke', 'token=whatever', NOT_A_FORM, {
    authorization: APP,
    headers: { 'content-type': 'text/plain' },
  }),
  post('revoke: an oversized body', '/oauth/revoke', OVERSIZED, TOO_LARGE, { authorization: APP }),
  post(
    'revoke: two Authorization headers',
    '/oauth/revoke',
    'token=whatever',
    oauthError(400, 'invalid_request', 'send at most one Authorization header'),
    { authorization: [...APP, ...APP] },
  ),
]

const introspectionCases: Case[] = [
  ...(['unknown', 'expired', 'revoked'] as const).map((token) =>
    post(
      `introspect: ${token === 'unknown' ? 'an unknown' : `an ${token}`} token is {"active": false}`,
      '/oauth/introspect',
      `token=${TOKEN_VALUES[token]}`,
      ok({ active: false }),
      { authorization: RS },
    ),
  ),
  post(
    'introspect: a malformed value is {"active": false}',
    '/oauth/introspect',
    'token=garbage',
    ok({ active: false }),
    {
      authorization: RS,
    },
  ),
  post(
    'introspect: without client authentication',
    '/oauth/introspect',
    `token=${TOKEN_VALUES.data}`,
    oauthError(401, 'invalid_client', 'introspection requires client authentication', true),
  ),
  post(
    'introspect: as a public client',
    '/oauth/introspect',
    `token=${TOKEN_VALUES.data}&client_id=pub`,
    oauthError(401, 'invalid_client', 'introspection requires a confidential client', true),
  ),
  post(
    'introspect: with a wrong secret',
    '/oauth/introspect',
    `token=${TOKEN_VALUES.data}`,
    oauthError(401, 'invalid_client', 'client authentication failed', true),
    { authorization: [basicOf('rs', 'wrong')] },
  ),
  post(
    'introspect: as a client not allowed to introspect',
    '/oauth/introspect',
    `token=${TOKEN_VALUES.data}`,
    oauthError(400, 'unauthorized_client', 'this client is not allowed to introspect tokens'),
    { authorization: APP },
  ),
  post(
    'introspect: a missing token',
    '/oauth/introspect',
    '',
    oauthError(400, 'invalid_request', 'token is required'),
    { authorization: RS },
  ),
  post('introspect: a body that is not a form or JSON', '/oauth/introspect', 'token=x', NOT_A_FORM, {
    authorization: RS,
    headers: { 'content-type': 'text/plain' },
  }),
  post('introspect: an oversized body', '/oauth/introspect', OVERSIZED, TOO_LARGE, { authorization: RS }),
  {
    name: 'introspect: GET is no route',
    path: '/oauth/introspect',
    expect: NOT_FOUND,
  },
]

/** Every case, in the order they run (state changes, such as a member's status, come in order). */
export const CASES: readonly Case[] = [
  ...matrixCases,
  ...listingCases,
  ...pagingCases,
  ...exportCases,
  ...bearerCases,
  ...routeCases,
  ...bypassCases,
  ...methodCases,
  ...malformedInputCases,
  ...discoveryCases,
  ...revocationCases,
  ...introspectionCases,
]
