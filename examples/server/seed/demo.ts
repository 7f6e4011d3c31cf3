/**
 * The embedded demo seed that `npm start` serves when no `--seed` is given: three users, one
 * organization, datasets at every public level, one export-restricted dataset, two workflows and
 * tokens of several scope sets. Its token values are public (they are printed on start): never
 * reuse them anywhere else. It goes through the same validation as any seed file.
 */

import { DEMO_CLIENTS, demoOAuthLines } from './demo-oauth.js'

/** The demo seed, in the seed file format of docs/seed-format.md. */
export const DEMO_SEED = {
  users: [
    { handle: 'alice', password: 'alice-demo-password' },
    { handle: 'bob', password: 'bob-demo-password' },
    { handle: 'carol', password: 'carol-demo-password' },
  ],
  organizations: [{ handle: 'acme', admins: ['alice'], members: ['bob', 'carol'] }],
  datasets: [
    {
      owner: 'acme',
      name: 'claims',
      description: 'Insurance claims, hidden from the public; bob may read its metadata.',
      publicLevel: 'none',
      access: { bob: 'metadata' },
      tables: [
        {
          name: 'visits',
          variables: [
            { name: 'id', type: 'integer' },
            { name: 'clinic', type: 'string' },
            { name: 'cost', type: 'number' },
          ],
          rows: [
            [1, 'north', 120.5],
            [2, 'south', 80],
            [3, 'north', 310.25],
          ],
        },
      ],
    },
    {
      owner: 'acme',
      name: 'survey',
      description: 'A staff survey whose existence is public; bob may read its data.',
      publicLevel: 'overview',
      access: { bob: 'data' },
      tables: [
        {
          name: 'answers',
          variables: [
            { name: 'question', type: 'string' },
            { name: 'score', type: 'integer' },
          ],
          rows: [
            ['commute', 3],
            ['canteen', 4],
          ],
        },
      ],
    },
    {
      owner: 'acme',
      name: 'hospitals',
      description: 'Hospital directory: its metadata is public.',
      publicLevel: 'metadata',
      tables: [
        {
          name: 'sites',
          variables: [
            { name: 'name', type: 'string' },
            { name: 'beds', type: 'integer' },
          ],
          rows: [
            ['General', 420],
            ['St. Mary', 180],
          ],
        },
      ],
    },
    {
      owner: 'acme',
      name: 'weather',
      description: 'Daily weather: fully public data.',
      publicLevel: 'data',
      tables: [
        {
          name: 'daily',
          variables: [
            { name: 'day', type: 'string' },
            { name: 'celsius', type: 'number' },
          ],
          rows: [
            ['2025-01-01', 3.5],
            ['2025-01-02', 4],
            ['2025-01-03', -1.5],
          ],
        },
      ],
    },
    {
      owner: 'acme',
      name: 'trial',
      description:
        'Trial results under export restrictions: at most 5 records and 4096 bytes per export, to loopback clients only.',
      publicLevel: 'none',
      access: { bob: 'data' },
      exportRestrictions: { maxBytes: 4096, maxRecords: 5, allowedIps: ['127.0.0.0/8', '::1'] },
      tables: [
        {
          name: 'visits',
          variables: [
            { name: 'patient', type: 'integer' },
            { name: 'arm', type: 'string' },
          ],
          rows: [
            [101, 'placebo'],
            [102, 'drug'],
            [103, 'drug'],
            [104, 'placebo'],
            [105, 'drug'],
            [106, 'placebo'],
            [107, 'drug'],
            [108, 'placebo'],
          ],
        },
      ],
    },
    {
      owner: 'bob',
      name: 'notes',
      description: "Bob's private notes.",
      publicLevel: 'none',
      tables: [
        { name: 'entries', variables: [{ name: 'text', type: 'string' }], rows: [['call the clinic']] },
      ],
    },
  ],
  workflows: [
    { owner: 'acme', name: 'etl', publicLevel: 'none', access: { bob: 'read' } },
    { owner: 'alice', name: 'cleanup', publicLevel: 'read' },
  ],
  tokens: [
    {
      user: 'alice',
      name: 'admin',
      scopes: ['data.edit', 'workflow.write', 'organization.write'],
      value: 'dap_9dzMtUcaWCDPen7A6qZ22SWPZrBH2Tke23VPIp',
    },
    {
      user: 'alice',
      name: 'reader',
      scopes: ['data.metadata'],
      value: 'dap_nylvAnFwueaXrE1htKmge6DBocagMgau1JMrMh',
    },
    {
      user: 'bob',
      name: 'analyst',
      scopes: ['data.data', 'wokflow.read'],
      value: 'dap_pLffO8EKaxhOEQVXUE3FRu2xH2Dj4r8I2oOlZ0',
    },
    {
      user: 'bob',
      name: 'overview',
      scopes: ['data.overview'],
      value: 'dap_60lpDYno18npjnT1iVibfqd8Q1cMJZPy3Nngb8',
    },
    { user: 'carol', name: 'public', scopes: [], value: 'dap_1mLrl1Eb3mcxHhCXjX2cdu1hTB7j9dw43kHZYP' },
    {
      user: 'bob',
      name: 'old',
      scopes: ['data.data'],
      value: 'dap_ei05Gf4Ikmk3VXfn4dBLqn4RkPudEK0745PJpp',
      revoked: true,
    },
  ],
  clients: DEMO_CLIENTS,
} as const

/** A demo token as the start-up banner lists it. */
export interface DemoToken {
  readonly name: string
  readonly user: string
  readonly scopes: readonly string[]
  readonly value: string
  readonly revoked: boolean
}

/** The demo tokens, with `public` shown as every token carries it. */
export const DEMO_TOKENS: readonly DemoToken[] = DEMO_SEED.tokens.map((token) => ({
  name: token.name,
  user: token.user,
  scopes: ['public', ...token.scopes],
  value: token.value,
  revoked: 'revoked' in token && token.revoked,
}))

function tokenValue(user: string, name: string): string {
  const token = DEMO_TOKENS.find((each) => each.user === user && each.name === name)
  if (token === undefined) throw new Error(`no demo token ${user}/${name}`)
  return token.value
}

/** A request the banner suggests, with the status it answers. */
export interface DemoRequest {
  /** What the request shows. */
  readonly title: string
  readonly status: number
  readonly method: 'GET' | 'POST'
  readonly path: string
  /** The demo token sent, as `user/name`. */
  readonly token?: { readonly user: string; readonly name: string }
  /** A JSON body. */
  readonly body?: string
}

/** The requests printed as `curl` lines on start: allow, 401, 403 and 404. */
export const DEMO_REQUESTS: readonly DemoRequest[] = [
  {
    title: "bob's analyst token reads the metadata of acme/claims",
    status: 200,
    method: 'GET',
    path: '/api/v1/datasets/acme/claims/metadata',
    token: { user: 'bob', name: 'analyst' },
  },
  {
    title: 'the listing, with maxResults in a JSON body as the contract example sends it',
    status: 200,
    method: 'GET',
    path: '/api/v1/organizations/acme/datasets',
    token: { user: 'bob', name: 'overview' },
    body: '{"maxResults": 2}',
  },
  {
    title: 'five rows of the export-restricted acme/trial: within its caps',
    status: 200,
    method: 'GET',
    path: '/api/v1/datasets/acme/trial/tables/visits/rows?maxResults=5',
    token: { user: 'bob', name: 'analyst' },
  },
  { title: 'no token', status: 401, method: 'GET', path: '/api/v1/datasets/acme/claims' },
  {
    title: 'a revoked token',
    status: 401,
    method: 'GET',
    path: '/api/v1/datasets/acme/claims',
    token: { user: 'bob', name: 'old' },
  },
  {
    title: 'bob may see the metadata of acme/claims, but this token only has data.overview',
    status: 403,
    method: 'GET',
    path: '/api/v1/datasets/acme/claims/metadata',
    token: { user: 'bob', name: 'overview' },
  },
  {
    title: 'six rows of acme/trial: over its 5-record cap',
    status: 403,
    method: 'GET',
    path: '/api/v1/datasets/acme/trial/tables/visits/rows?maxResults=6',
    token: { user: 'bob', name: 'analyst' },
  },
  {
    title: 'carol may not learn that acme/claims exists',
    status: 404,
    method: 'GET',
    path: '/api/v1/datasets/acme/claims',
    token: { user: 'carol', name: 'public' },
  },
]

function shellQuote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`
}

/**
 * The `curl` command of a demo request against `baseUrl`.
 *
 * @example
 * curlCommand(DEMO_REQUESTS[3]!, 'http://127.0.0.1:3000')
 * // "curl -i 'http://127.0.0.1:3000/api/v1/datasets/acme/claims'"
 */
export function curlCommand(request: DemoRequest, baseUrl: string): string {
  const parts = ['curl', '-i']
  if (request.method !== 'GET' || request.body !== undefined) parts.push('-X', request.method)
  if (request.token !== undefined) {
    parts.push(
      '-H',
      shellQuote(`Authorization: Bearer ${tokenValue(request.token.user, request.token.name)}`),
    )
  }
  if (request.body !== undefined)
    parts.push('-H', shellQuote('Content-Type: application/json'), '-d', shellQuote(request.body))
  parts.push(shellQuote(`${baseUrl}${request.path}`))
  return parts.join(' ')
}

/**
 * The banner printed after `listening on …` for the demo seed: the tokens, then the requests to try.
 */
export function demoBanner(baseUrl: string): string {
  const rows = DEMO_TOKENS.map((token) => [
    token.name,
    token.user,
    token.scopes.join(' '),
    token.revoked ? `${token.value} (revoked)` : token.value,
  ])
  const header = ['name', 'user', 'scopes', 'value']
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => row[column]!.length)),
  )
  const line = (cells: readonly string[]) =>
    `  ${cells.map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column]!))).join('  ')}`
  return [
    '',
    'Demo tokens (public demo values: never use them anywhere else):',
    line(header),
    ...rows.map(line),
    '',
    'Try:',
    ...DEMO_REQUESTS.flatMap((request) => [
      `  # ${request.status}: ${request.title}`,
      `  ${curlCommand(request, baseUrl)}`,
    ]),
    '',
    ...demoOAuthLines(baseUrl),
    '',
  ].join('\n')
}
