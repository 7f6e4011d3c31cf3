import { inspect } from 'node:util'
import { describe, expect, test } from 'vitest'
import { loadSeed } from '../../examples/server/seed/load.js'
import { parseSeed } from '../../examples/server/seed/schema.js'
import { ConfigError } from '../../src/index.js'
import { RESOURCE_IDENTIFIER_RULE } from '../../src/oauth/index.js'

const ALICE = 'dap_9dzMtUcaWCDPen7A6qZ22SWPZrBH2Tke23VPIp'
const BOB = 'dap_nylvAnFwueaXrE1htKmge6DBocagMgau1JMrMh'
// ALICE with its last checksum character changed.
const BAD_CHECKSUM = 'dap_9dzMtUcaWCDPen7A6qZ22SWPZrBH2Tke23VPIq'
// A well-formed OAuth token value (an OAuth token cannot be seeded).
const OAUTH = 'dao_BhO0muwq1IP9jMsxzGPVNmUvBxwTJWYg3jQ8lr'

type Json = ReturnType<typeof JSON.parse>

function baseSeed(): Json {
  return {
    users: [
      { handle: 'alice', password: 'a-secret' },
      { handle: 'bob', password: 'b-secret' },
    ],
    organizations: [{ handle: 'acme', admins: ['alice'], members: ['bob'] }],
    datasets: [
      {
        owner: 'acme',
        name: 'claims',
        description: 'Claims',
        publicLevel: 'none',
        access: { bob: 'metadata', alice: 'edit' },
        exportRestrictions: { maxBytes: 100000, maxRecords: 1000, allowedIps: ['10.0.0.0/8'] },
        tables: [{ name: 'visits', variables: [{ name: 'id', type: 'integer' }], rows: [[1], [2]] }],
      },
      { owner: 'alice', name: 'notes', publicLevel: 'data' },
    ],
    workflows: [{ owner: 'alice', name: 'etl', publicLevel: 'none', access: { bob: 'read' } }],
    tokens: [
      {
        user: 'alice',
        name: 'ci',
        scopes: ['data.data'],
        value: ALICE,
        expiresAt: '2027-01-01T00:00:00Z',
        revoked: false,
      },
      { user: 'bob', name: 'bob', scopes: [], value: BOB },
    ],
    clients: [{ id: 'cli', secret: 'shh', redirectUris: ['http://127.0.0.1:8765/cb'], offline: true }],
    resources: [{ uri: 'https://reports.example.org/mcp', name: 'Reports' }],
  }
}

function seedWith(change: (seed: Json) => void): Json {
  const seed = baseSeed()
  change(seed)
  return seed
}

// Each row: what is wrong with the seed, and the exact line the server prints.
const BAD_SEEDS: readonly (readonly [string, Json, string])[] = [
  ['not an object', [], 'seed: [] is not an object'],
  ['an unknown top-level key', seedWith((s) => (s.extra = 1)), 'extra: unknown key'],
  [
    'an unknown nested key',
    seedWith((s) => (s.datasets[0].colour = 'red')),
    'datasets[0].colour: unknown key',
  ],
  ['a missing section', seedWith((s) => delete s.users), 'users: is required'],
  ['a section of the wrong type', seedWith((s) => (s.users = {})), 'users: {} is not an array'],
  ['a missing field', seedWith((s) => delete s.users[1].password), 'users[1].password: is required'],
  ['an empty password', seedWith((s) => (s.users[1].password = '')), 'users[1].password: must not be empty'],
  [
    'a bad handle',
    seedWith((s) => (s.users[1].handle = 'Bob Smith')),
    'users[1].handle: "Bob Smith" is not a valid user handle: use 1–64 letters, digits, ".", "_" or "-", starting with a letter or digit',
  ],
  [
    'a duplicate user',
    seedWith((s) => (s.users[1].handle = 'alice')),
    'users[1].handle: "alice" is already a user',
  ],
  [
    'an organization named like a user',
    seedWith((s) => (s.organizations[0].handle = 'bob')),
    'organizations[0].handle: "bob" is already a user handle',
  ],
  [
    'an admin who is not a user',
    seedWith((s) => (s.organizations[0].admins = ['eve'])),
    'organizations[0].admins[0]: "eve" is not a user of this seed',
  ],
  [
    'a member listed twice',
    seedWith((s) => (s.organizations[0].members = ['bob', 'bob'])),
    'organizations[0].members[1]: "bob" is listed twice',
  ],
  [
    'a dataset owner that does not exist',
    seedWith((s) => (s.datasets[1].owner = 'nobody')),
    'datasets[1].owner: "nobody" is neither a user nor an organization',
  ],
  [
    'a duplicate dataset',
    seedWith((s) => (s.datasets[1] = { owner: 'acme', name: 'claims', publicLevel: 'none' })),
    'datasets[1].name: "claims" is already used by datasets[0] of "acme"',
  ],
  [
    'a bad public level',
    seedWith((s) => (s.datasets[1].publicLevel = 'edit')),
    'datasets[1].publicLevel: "edit" is not a public level; expected one of none, overview, metadata, data',
  ],
  [
    'a bad access level',
    seedWith((s) => (s.datasets[0].access.bob = 'write')),
    'datasets[0].access.bob: "write" is not a dataset access level; expected one of none, overview, metadata, data, edit',
  ],
  [
    'access for someone who is not a user',
    seedWith((s) => (s.datasets[0].access.eve = 'data')),
    'datasets[0].access.eve: "eve" is not a user of this seed',
  ],
  [
    'a CIDR with host bits set',
    seedWith((s) => (s.datasets[1].exportRestrictions = { allowedIps: ['10.1.2.77/24'] })),
    'datasets[1].exportRestrictions.allowedIps[0]: "10.1.2.77/24" has host bits set; did you mean 10.1.2.0/24?',
  ],
  [
    'a negative cap',
    seedWith((s) => (s.datasets[0].exportRestrictions.maxRecords = -1)),
    'datasets[0].exportRestrictions.maxRecords: -1 is not a valid cap; expected a whole number from 0 to 9007199254740991',
  ],
  [
    'an unknown restriction',
    seedWith((s) => (s.datasets[0].exportRestrictions.maxRows = 5)),
    'datasets[0].exportRestrictions.maxRows: unknown key "maxRows"; expected maxBytes, maxRecords or allowedIps',
  ],
  [
    'a row of the wrong width',
    seedWith((s) => (s.datasets[0].tables[0].rows[1] = [2, 'x'])),
    'datasets[0].tables[0].rows[1]: [2,"x"] has 2 values; the table has 1 variable',
  ],
  [
    'a cell that is not a scalar',
    seedWith((s) => (s.datasets[0].tables[0].rows[0] = [{ a: 1 }])),
    'datasets[0].tables[0].rows[0][0]: {"a":1} is not a cell value; expected a string, number, boolean or null',
  ],
  [
    'a duplicate table',
    seedWith((s) => s.datasets[0].tables.push({ name: 'visits', variables: [], rows: [] })),
    'datasets[0].tables[1].name: "visits" is already a table of this dataset',
  ],
  [
    'a description with a control character',
    seedWith((s) => (s.datasets[0].description = 'a\u0007b')),
    'datasets[0].description: "a\\u0007b" is not a valid description: at most 10000 characters, no control characters but tabs and line breaks',
  ],
  [
    'a bad workflow level',
    seedWith((s) => (s.workflows[0].access.bob = 'edit')),
    'workflows[0].access.bob: "edit" is not a workflow access level; expected one of none, read, write',
  ],
  [
    'a workflow owner that does not exist',
    seedWith((s) => (s.workflows[0].owner = 'nobody')),
    'workflows[0].owner: "nobody" is neither a user nor an organization',
  ],
  [
    'a token of someone who is not a user',
    seedWith((s) => (s.tokens[1].user = 'eve')),
    'tokens[1].user: "eve" is not a user of this seed',
  ],
  [
    'a misspelt scope',
    seedWith((s) => (s.tokens[0].scopes = ['data.data', 'workflow.read'])),
    'tokens[0].scopes[1]: unknown scope "workflow.read"; did you mean "wokflow.read"?',
  ],
  [
    'a wrongly cased scope',
    seedWith((s) => (s.tokens[0].scopes = ['Data.Data'])),
    'tokens[0].scopes[0]: unknown scope "Data.Data"; scope names are case-sensitive: "data.data"',
  ],
  // A token value is a secret, even a malformed one: the line names the field, says what is wrong,
  // and shows at most the hint of the token list (prefix, "…", last four characters).
  [
    'a token value with a bad checksum',
    seedWith((s) => (s.tokens[0].value = BAD_CHECKSUM)),
    'tokens[0].value: dap_…VPIq is not an API token value: its checksum does not match',
  ],
  [
    'a token value of the wrong length',
    seedWith((s) => (s.tokens[0].value = 'dap_abc')),
    'tokens[0].value: is not an API token value: it has 7 characters, not 42',
  ],
  [
    'a token value one character short',
    seedWith((s) => (s.tokens[0].value = ALICE.slice(0, -1))),
    'tokens[0].value: dap_…3VPI is not an API token value: it has 41 characters, not 42',
  ],
  [
    'a token value without the prefix',
    seedWith((s) => (s.tokens[0].value = 'ghp_abc')),
    'tokens[0].value: is not an API token value: it must start with "dap_"',
  ],
  [
    'a token value with a leading space',
    seedWith((s) => (s.tokens[0].value = ` ${ALICE}`)),
    'tokens[0].value: dap_…VPIp is not an API token value: it starts with white space',
  ],
  [
    'a token value with a trailing line break',
    seedWith((s) => (s.tokens[0].value = `${ALICE}\n`)),
    'tokens[0].value: dap_…VPIp is not an API token value: it ends with white space',
  ],
  [
    'an OAuth token value',
    seedWith((s) => (s.tokens[0].value = OAUTH)),
    'tokens[0].value: dao_…Q8lr is an OAuth token value; seed tokens are API tokens (dap_…)',
  ],
  [
    'a token value with a character outside base62',
    seedWith((s) => (s.tokens[0].value = `${ALICE.slice(0, 20)}-${ALICE.slice(21)}`)),
    'tokens[0].value: dap_…VPIp is not an API token value: only base62 characters may follow "dap_"',
  ],
  [
    'a token value that is not a string',
    seedWith((s) => (s.tokens[0].value = 12345)),
    'tokens[0].value: is not a string',
  ],
  [
    'a password that is not a string',
    seedWith((s) => (s.users[1].password = 12345)),
    'users[1].password: is not a string',
  ],
  [
    'a client secret that is not a string',
    seedWith((s) => (s.clients[0].secret = 12345)),
    'clients[0].secret: is not a string',
  ],
  [
    'a token value used twice',
    seedWith((s) => (s.tokens[1].value = ALICE)),
    'tokens[1].value: is the same value as tokens[0].value',
  ],
  [
    'an expiry without a time zone',
    seedWith((s) => (s.tokens[0].expiresAt = '2027-01-01T00:00:00')),
    'tokens[0].expiresAt: "2027-01-01T00:00:00" is not an ISO 8601 date-time with a time zone, such as "2027-01-01T00:00:00Z"',
  ],
  [
    'a revoked flag that is not a boolean',
    seedWith((s) => (s.tokens[0].revoked = 'yes')),
    'tokens[0].revoked: "yes" is not a boolean',
  ],
  [
    'a blank token name',
    seedWith((s) => (s.tokens[0].name = '  ')),
    'tokens[0].name: "  " is not a valid token name: must not be empty',
  ],
  [
    'a redirect URI that is not absolute',
    seedWith((s) => (s.clients[0].redirectUris = ['/cb'])),
    'clients[0].redirectUris[0]: "/cb" is not an absolute http(s) URL without a fragment',
  ],
  [
    'a duplicate client',
    seedWith((s) => s.clients.push({ id: 'cli', redirectUris: ['https://example.com/cb'] })),
    'clients[1].id: "cli" is already a client id',
  ],
  [
    'a client without redirect URIs that does not introspect',
    seedWith((s) => (s.clients[0].redirectUris = [])),
    'clients[0].redirectUris: must list at least one redirect URI',
  ],
  [
    'a public client allowed to introspect',
    seedWith((s) => s.clients.push({ id: 'rs', redirectUris: [], introspect: true })),
    'clients[1].introspect: needs a secret: only a confidential client may introspect',
  ],
  [
    'introspect that is not a boolean',
    seedWith((s) => (s.clients[0].introspect = 'yes')),
    'clients[0].introspect: "yes" is not a boolean',
  ],
  [
    'a resource with a fragment',
    seedWith((s) => (s.resources[0].uri = 'https://reports.example.org/mcp#x')),
    `resources[0].uri: "https://reports.example.org/mcp#x" is not a resource identifier: it ${RESOURCE_IDENTIFIER_RULE}`,
  ],
  [
    'a relative resource',
    seedWith((s) => (s.resources[0].uri = '/mcp')),
    `resources[0].uri: "/mcp" is not a resource identifier: it ${RESOURCE_IDENTIFIER_RULE}`,
  ],
  [
    'a duplicate resource',
    seedWith((s) => s.resources.push({ uri: 'https://reports.example.org/mcp', name: 'Again' })),
    'resources[1].uri: "https://reports.example.org/mcp" is already a resource',
  ],
  [
    'a resource without a name',
    seedWith((s) => (s.resources[0].name = ' ')),
    'resources[0].name: must not be empty or start or end with white space',
  ],
  [
    'a resource with an unknown field',
    seedWith((s) => (s.resources[0].scopes = ['public'])),
    'resources[0].scopes: unknown key',
  ],
]

describe('seed validation', () => {
  test.each(BAD_SEEDS)('refuses %s with one line naming the field', (_title, seed, line) => {
    let error: unknown
    try {
      parseSeed(seed)
    } catch (caught) {
      error = caught
    }
    expect(error).toBeInstanceOf(ConfigError)
    expect((error as ConfigError).message).toBe(line)
    expect(line).not.toContain('\n')
  })

  // Every way a seed token value can be wrong: whatever the line says, and whatever the error
  // carries along (its cause, as `console.error(error)` would print it), the value is not in it —
  // not whole, not trimmed, not its random middle.
  test.each([
    ['a bad checksum', BAD_CHECKSUM],
    ['a leading space', ` ${ALICE}`],
    ['a trailing space', `${ALICE} `],
    ['a leading tab and a trailing line break', `\t${ALICE}\r\n`],
    ['an OAuth token value', OAUTH],
    ['an OAuth token value with a leading space', ` ${OAUTH}`],
    ['the prefix in capitals', `DAP_${ALICE.slice(4)}`],
    ['no prefix', ALICE.slice(4)],
    ['one character short', ALICE.slice(0, -1)],
    ['one character more', `${ALICE}x`],
    ['twice', `${ALICE}${ALICE}`],
    ['a character outside base62', `${ALICE.slice(0, 20)}%${ALICE.slice(21)}`],
    ['a quote inside', `${ALICE.slice(0, 20)}"${ALICE.slice(21)}`],
    ['a long garbage value', `dap_${'x'.repeat(200)}`],
    ['a password-like value', 'hunter2-correct-horse-battery'],
  ])('no message about a bad token value contains the value (%s)', (_title, value) => {
    let error: unknown
    try {
      parseSeed(seedWith((s) => (s.tokens[0].value = value)))
    } catch (caught) {
      error = caught
    }
    expect(error).toBeInstanceOf(ConfigError)
    const message = (error as ConfigError).message
    expect(message).toMatch(/^tokens\[0\]\.value: /)
    expect(message).not.toContain('\n')
    const secret = value.trim()
    const middle = secret.slice(4, -4)
    for (const text of [message, inspect(error, { depth: 20 })]) {
      expect(text).not.toContain(secret)
      expect(text).not.toContain(middle)
      expect(text).not.toContain(JSON.stringify(secret).slice(1, -1))
    }
  })

  test('the same value twice is named by where it was first used, never printed', () => {
    let error: unknown
    try {
      parseSeed(seedWith((s) => (s.tokens[1].value = ALICE)))
    } catch (caught) {
      error = caught
    }
    expect(inspect(error, { depth: 20 })).not.toContain(ALICE.slice(4, -4))
  })

  test('accepts the format of design §9 and applies the defaults', () => {
    const seed = parseSeed(baseSeed())
    expect(seed.datasets[1]).toEqual({
      owner: 'alice',
      name: 'notes',
      description: '',
      publicLevel: 'data',
      access: {},
      exportRestrictions: undefined,
      tables: [],
    })
    expect(seed.tokens[0]).toMatchObject({
      scopes: ['public', 'data.data'],
      expiresAt: Date.UTC(2027, 0, 1),
      revoked: false,
    })
    expect(seed.tokens[1]).toMatchObject({ scopes: ['public'], expiresAt: undefined, revoked: false })
    expect(seed.clients[0]).toMatchObject({
      secret: 'shh',
      offline: true,
      introspect: false,
      dpopBound: false,
    })
  })

  test('accepts a resource server: a confidential client that introspects, without redirect URIs', () => {
    const seed = parseSeed(
      seedWith((s) => s.clients.push({ id: 'rs', secret: 'rs-secret', redirectUris: [], introspect: true })),
    )
    expect(seed.clients[1]).toEqual({
      id: 'rs',
      secret: 'rs-secret',
      redirectUris: [],
      offline: false,
      introspect: true,
      dpopBound: false,
    })
  })

  test('accepts a seed with only the required sections', () => {
    expect(() => parseSeed({ users: [], organizations: [], datasets: [], tokens: [] })).not.toThrow()
  })

  test('keeps no secret once loaded: passwords and client secrets are scrypt hashes, tokens SHA-256 records', async () => {
    const seed = await loadSeed(
      seedWith((s) => (s.tokens[1].revoked = true)),
      1_700_000_000_000,
    )
    const text = JSON.stringify(seed)
    for (const secret of ['a-secret', 'b-secret', 'shh', ALICE, BOB]) expect(text).not.toContain(secret)
    expect(seed.users[0]!.passwordHash).toMatch(/^scrypt\$16384\$8\$1\$/)
    expect(seed.clients[0]!.secretHash).toMatch(/^scrypt\$/)
    expect(seed.tokens[0]).toMatchObject({ userId: 'alice', kind: 'api', expiresAt: Date.UTC(2027, 0, 1) })
    expect(seed.tokens[0]).not.toHaveProperty('revokedAt')
    expect(seed.tokens[1]).toMatchObject({ userId: 'bob', revokedAt: 1_700_000_000_000 })
  })
})
