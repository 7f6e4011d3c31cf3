/**
 * The conformance seed: a caller `u` whose tokens cover every dataset scope ceiling, a dataset for
 * every public level × user level (the visibility matrix), export-capped and IP-restricted datasets,
 * workflows and an organization. Token values are generated per run; cases name tokens, not values.
 */
import { generateTokenValue } from '../../src/tokens/token-format.js'

export const PUBLIC_LEVELS = ['none', 'overview', 'metadata', 'data'] as const
export const USER_LEVELS = ['none', 'overview', 'metadata', 'data', 'edit'] as const
export type PublicLevel = (typeof PUBLIC_LEVELS)[number]
export type UserLevel = (typeof USER_LEVELS)[number]

/** The dataset scope ceilings, as the token of `u` that grants each. */
export const SCOPE_TOKENS = {
  public: [],
  overview: ['data.overview'],
  metadata: ['data.metadata'],
  data: ['data.data'],
  edit: ['data.edit'],
} as const
export type ScopeToken = keyof typeof SCOPE_TOKENS

const TOKENS = {
  ...Object.fromEntries(Object.entries(SCOPE_TOKENS).map(([name, scopes]) => [name, { user: 'u', scopes }])),
  wfread: { user: 'u', scopes: ['wokflow.read'] },
  wfwrite: { user: 'u', scopes: ['workflow.write'] },
  expired: { user: 'u', scopes: ['data.data'], expiresAt: '2020-01-01T00:00:00Z' },
  revoked: { user: 'u', scopes: ['data.data'], revoked: true },
  'admin-read': { user: 'admin', scopes: ['organization.read'] },
  'admin-write': { user: 'admin', scopes: ['organization.write'] },
  'admin-data': { user: 'admin', scopes: ['data.data'] },
  'member-org': { user: 'member', scopes: ['organization.write'] },
} as Record<string, { user: string; scopes: readonly string[]; expiresAt?: string; revoked?: boolean }>

/** Every token a case may name. */
export type TokenName =
  | ScopeToken
  | 'wfread'
  | 'wfwrite'
  | 'expired'
  | 'revoked'
  | 'admin-read'
  | 'admin-write'
  | 'admin-data'
  | 'member-org'

/** This run's token values, by name; plus one well-formed value that is in no store. */
export const TOKEN_VALUES: Readonly<Record<TokenName | 'unknown', string>> = Object.fromEntries(
  [...Object.keys(TOKENS), 'unknown'].map((name) => [name, generateTokenValue('api')]),
) as Record<TokenName | 'unknown', string>

export const matrixName = (publicLevel: PublicLevel, userLevel: UserLevel) => `m-${publicLevel}-${userLevel}`
export const matrixDescription = (publicLevel: PublicLevel, userLevel: UserLevel) =>
  `public ${publicLevel}, u ${userLevel}`

/** The size of two rows of `t` as the rows route sends them, and as a CSV export. */
export const TWO_ROWS_BYTES = Buffer.byteLength(JSON.stringify({ rows: [[1], [2]] }))
export const TWO_ROWS_CSV_BYTES = Buffer.byteLength('id\r\n1\r\n2\r\n')

const oneColumn = (count: number) => ({
  name: 't',
  variables: [{ name: 'id', type: 'integer' }],
  rows: Array.from({ length: count }, (_, i) => [i + 1]),
})

const restricted = (name: string, exportRestrictions: Record<string, unknown>, rows: number) => ({
  owner: 'vault',
  name,
  publicLevel: 'none',
  access: { u: 'data' },
  exportRestrictions,
  tables: [oneColumn(rows)],
})

/** The conformance seed's OAuth clients' secrets. */
export const APP_SECRET = 'conformance-app-secret-0123456789'
export const RS_SECRET = 'conformance-rs-secret-0123456789'

export const CONFORMANCE_SEED = {
  users: ['u', 'owner', 'admin', 'member'].map((handle) => ({ handle, password: `${handle}-password` })),
  organizations: [
    { handle: 'lab', admins: ['admin'], members: ['member', 'u'] },
    { handle: 'vault', admins: ['admin'] },
  ],
  datasets: [
    ...PUBLIC_LEVELS.flatMap((publicLevel) =>
      USER_LEVELS.map((userLevel) => ({
        owner: 'lab',
        name: matrixName(publicLevel, userLevel),
        description: matrixDescription(publicLevel, userLevel),
        publicLevel,
        ...(userLevel === 'none' ? {} : { access: { u: userLevel } }),
        tables: [oneColumn(2)],
      })),
    ),
    { owner: 'owner', name: 'o-hidden', publicLevel: 'none' },
    { owner: 'owner', name: 'o-open', description: 'open', publicLevel: 'overview' },
    restricted('cap-records', { maxRecords: 3 }, 5),
    restricted('cap-bytes', { maxBytes: TWO_ROWS_BYTES }, 3),
    restricted('cap-bytes-less', { maxBytes: TWO_ROWS_BYTES - 1 }, 3),
    restricted('cap-csv', { maxBytes: TWO_ROWS_CSV_BYTES, maxRecords: 2 }, 2),
    restricted('cap-csv-less', { maxBytes: TWO_ROWS_CSV_BYTES - 1 }, 2),
    restricted('cap-zero', { maxRecords: 0 }, 1),
    restricted('ips', { allowedIps: ['10.1.0.0/16', '2001:db8::/32'] }, 1),
  ],
  workflows: [
    { owner: 'lab', name: 'wf-hidden', publicLevel: 'none', access: { u: 'read' } },
    { owner: 'lab', name: 'wf-public', publicLevel: 'read' },
    { owner: 'lab', name: 'wf-write', publicLevel: 'none', access: { u: 'write' } },
  ],
  tokens: Object.entries(TOKENS).map(([name, token]) => ({
    ...token,
    name,
    value: TOKEN_VALUES[name as TokenName],
  })),
  clients: [
    // Confidential with offline access; public; a resource server allowed to introspect.
    { id: 'app', secret: APP_SECRET, redirectUris: ['http://127.0.0.1:8765/cb'], offline: true },
    { id: 'pub', redirectUris: ['http://127.0.0.1:8765/cb'] },
    { id: 'rs', secret: RS_SECRET, redirectUris: [], introspect: true },
  ],
}
