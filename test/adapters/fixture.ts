import type { DataChunk } from '../../adapters/shared/data-response.js'
import {
  type AccessPolicy,
  type AccessPolicyOptions,
  compileExportRestrictions,
  createAccessPolicy,
  type DatasetLevel,
  type DatasetResource,
  type Principal,
  type PublicDatasetLevel,
  type Resource,
} from '../../src/index.js'
import { MemoryTokenStore } from '../../src/tokens/memory-token-store.js'
import { generateTokenValue } from '../../src/tokens/token-format.js'
import { hashTokenValue } from '../../src/tokens/token-hash.js'
import {
  createApiToken,
  createOAuthToken,
  revokeToken,
  type TokenRecord,
} from '../../src/tokens/token-record.js'
import type { TokenStore } from '../../src/tokens/token-store.js'

/** The realm every test app's policy names in its challenges. */
export const REALM = 'data-api'

/** The resource identifier the fixture's policy guards (RFC 8707). */
export const RESOURCE = 'https://data.example.test/api/v1'

/** The fixed instant the policies decide at. */
export const NOW = Date.UTC(2026, 0, 1)

/** The named tokens of the fixture. */
export type TokenName =
  | 'alice'
  | 'aliceOverview'
  | 'bob'
  | 'carol'
  | 'oauth'
  | 'oauthHere'
  | 'oauthElsewhere'
  | 'revoked'
  | 'expired'
  | 'unknown'
  | 'failing'
  | 'hanging'

/** Token values by name; generated afresh for every fixture. */
export type TokenValues = Readonly<Record<TokenName, string>>

interface DatasetEntry {
  readonly publicLevel: PublicDatasetLevel
  readonly access?: Readonly<Record<string, DatasetLevel>>
  readonly exportRestrictions?: DatasetResource['exportRestrictions']
}

// The host's "database": a few datasets of the organization acme.
const DATASETS: Readonly<Record<string, DatasetEntry>> = {
  'acme/open': { publicLevel: 'data' },
  'acme/members': { publicLevel: 'none', access: { alice: 'edit', bob: 'metadata' } },
  'acme/capped': {
    publicLevel: 'data',
    exportRestrictions: compileExportRestrictions({ maxRecords: 5, maxBytes: 100 }),
  },
  'acme/bytecapped': {
    publicLevel: 'data',
    exportRestrictions: compileExportRestrictions({ maxBytes: 100 }),
  },
  'acme/fenced': {
    publicLevel: 'data',
    exportRestrictions: compileExportRestrictions({ allowedIps: ['10.1.2.0/24', '2001:db8::/32'] }),
  },
}

/** What every test app needs: the policy, the tokens, the resolver and the response bodies. */
export interface Fixture {
  readonly policy: AccessPolicy
  readonly tokens: TokenValues
  /** The host's resolver; `acme/broken` throws, as a failing database would. */
  describe(
    owner: string | undefined,
    name: string | undefined,
    principal: Principal | undefined,
  ): Promise<Resource | undefined>
}

/** What the fixture's token store throws for the `failing` token: hooks must hear this very value. */
export const STORE_FAILURE = new Error('token store down')

/** What the fixture's resolver throws for `acme/broken`: hooks must hear this very value. */
export const RESOLVER_FAILURE = new Error('database unavailable')

// A memory store that throws for one token and never answers for another.
function faultyStore(inner: TokenStore, failingHash: string, hangingHash: string): TokenStore {
  return {
    findByHash(hash) {
      if (hash === failingHash) throw STORE_FAILURE
      if (hash === hangingHash) return new Promise(() => {})
      return inner.findByHash(hash)
    },
    findById: (id) => inner.findById(id),
    save: (record) => inner.save(record),
    update: (record) => inner.update(record),
    listByOwner: (userId) => inner.listByOwner(userId),
    touch: (id, now) => inner.touch(id, now),
  }
}

/**
 * Builds the policy and tokens shared by the test apps of all three frameworks.
 *
 * @example
 * const fixture = await createFixture()
 */
export async function createFixture(
  hooks: Pick<AccessPolicyOptions, 'onDecision' | 'onError'> = {},
): Promise<Fixture> {
  const memory = new MemoryTokenStore({ now: () => NOW })
  const created = NOW - 60_000
  const save = async (token: { record: TokenRecord; value: string }): Promise<string> => {
    await memory.save(token.record)
    return token.value
  }
  const api = (userId: string, scopes: string) =>
    createApiToken({ userId, name: 'test', scopes, now: created })
  const revokedToken = api('alice', 'data.edit')
  const failing = generateTokenValue('api')
  const hanging = generateTokenValue('api')
  const tokens: TokenValues = {
    alice: await save(api('alice', 'data.edit')),
    aliceOverview: await save(api('alice', 'data.overview')),
    bob: await save(api('bob', 'data.data')),
    carol: await save(api('carol', '')),
    oauth: await save(
      createOAuthToken({ userId: 'alice', scopes: 'data.data', clientId: 'cli', now: created }),
    ),
    oauthHere: await save(
      createOAuthToken({
        userId: 'alice',
        scopes: 'data.data',
        clientId: 'cli',
        audience: ['https://tools.example.test/mcp', RESOURCE],
        now: created,
      }),
    ),
    oauthElsewhere: await save(
      createOAuthToken({
        userId: 'alice',
        scopes: 'data.data',
        clientId: 'cli',
        audience: ['https://tools.example.test/mcp'],
        now: created,
      }),
    ),
    revoked: await save({ record: revokeToken(revokedToken.record, created + 1), value: revokedToken.value }),
    expired: await save(
      createApiToken({
        userId: 'alice',
        name: 'old',
        scopes: 'data.edit',
        now: created,
        expiresAt: created + 1,
      }),
    ),
    unknown: generateTokenValue('api'),
    failing,
    hanging,
  }
  const policy = createAccessPolicy({
    tokens: faultyStore(memory, hashTokenValue(failing), hashTokenValue(hanging)),
    realm: REALM,
    resource: RESOURCE,
    storeTimeoutMs: 150,
    now: () => NOW,
    ...hooks,
  })
  return {
    policy,
    tokens,
    async describe(owner, name, principal) {
      const key = `${owner}/${name}`
      if (key === 'acme/broken') throw RESOLVER_FAILURE
      const entry = DATASETS[key]
      if (entry === undefined) return undefined
      const userLevel = principal?.userId === undefined ? undefined : entry.access?.[principal.userId]
      return {
        kind: 'dataset',
        publicLevel: entry.publicLevel,
        ...(userLevel === undefined ? {} : { userLevel }),
        ...(entry.exportRestrictions === undefined ? {} : { exportRestrictions: entry.exportRestrictions }),
      }
    },
  }
}

/** Response bodies, identical on every framework. */
export const bodies = {
  overview: (owner: string | undefined, name: string | undefined) => JSON.stringify({ owner, name }),
  metadata: (owner: string | undefined, name: string | undefined) =>
    JSON.stringify({ owner, name, tables: ['visits'] }),
  rows: (count: number) => JSON.stringify({ rows: Array.from({ length: count }, (_, i) => [i]) }),
  blob: (bytes: number) => 'x'.repeat(bytes),
  exportCsv: 'id\n0\n1\n',
  listing: (user: string | undefined, principal: Principal | undefined) =>
    JSON.stringify({ user, caller: principal?.userId ?? null }),
}

/** A whole number from a query parameter, or the fallback. */
export function countParameter(value: unknown, fallback: number): number {
  const count = typeof value === 'string' ? Number(value) : Number.NaN
  return Number.isSafeInteger(count) && count >= 0 ? count : fallback
}

/**
 * `count` chunks of `size` bytes and one record each (or, `uncounted`, chunks that do not say how
 * many records they carry), yielding to the event loop in between.
 */
export async function* streamChunks(
  count: number,
  size: number,
  uncounted = false,
): AsyncGenerator<DataChunk> {
  for (let i = 0; i < count; i++) {
    await new Promise((resolve) => setImmediate(resolve))
    yield uncounted ? { data: 'x'.repeat(size) } : { data: 'x'.repeat(size), records: 1 }
  }
}
