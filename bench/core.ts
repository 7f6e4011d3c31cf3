// In-process benchmarks of the core: decisions against peers, the authentication pipeline, and
// allow-lists. Each returns rows for docs/performance.md.

import { hash as nodeHash } from 'node:crypto'
import { sha256 } from '@noble/hashes/sha2.js'
import { bytesToHex } from '@noble/hashes/utils.js'
import {
  compileExportRestrictions as builtCompileExportRestrictions,
  createAccessPolicy,
  createApiToken,
  type DatasetResource,
  MemoryTokenStore,
  parseScopes,
} from 'data-access-policy'
import { decide } from 'data-access-policy/testing'
import { checkClientAddress, compileExportRestrictions } from '../src/restrictions/export-restrictions.js'
import { hashTokenValue } from '../src/tokens/token-hash.js'
import {
  buildCatalogueMix,
  type DecisionLibrary,
  decideCandidate,
  floorCandidate,
  precomputedCandidate,
} from './decision-mix.js'
import {
  baselineCandidate,
  buildMix,
  casbinCandidate,
  caslCandidate,
  cedarCandidate,
  coreCandidate,
} from './decision-peers.js'
import { compare, compareAsync, type Measurement, seeded } from './harness.js'

// What hosts run: the built package, one bundle (the sources, module by module, optimise differently).
const built: DecisionLibrary = {
  decide,
  parseScopes,
  compileExportRestrictions: builtCompileExportRestrictions,
}

/**
 * Decision: `decide` beside a hand-written floor on the whole catalogue (design §11's target), then
 * the core and its peers on the one rule they all encode.
 */
export async function benchDecision(): Promise<{
  catalogue: { size: number; rows: Measurement[]; looped: Measurement[] }
  fast: Measurement[]
  slow: Measurement[]
}> {
  const catalogueMix = buildCatalogueMix()
  const core = decideCandidate(built, catalogueMix)
  const catalogueRows = compare(
    [
      {
        name: 'hand-written floor (names to integers, a Set of scope names)',
        run: floorCandidate(catalogueMix),
      },
      { name: 'data-access-policy `decide`', run: (i) => core(i).allowed },
      {
        name: 'every answer precomputed (the loop around the candidates)',
        run: precomputedCandidate(catalogueMix),
      },
    ],
    { iterations: 300_000, rounds: 15 },
  )
  // The same requests decided in one loop per call, which the engine compiles with the candidate
  // inlined: each one's own work, without the call that the rows above pay per decision (as a host's
  // adapter does). Shown beside the target, not judged.
  const size = catalogueMix.length
  const floor = floorCandidate(catalogueMix)
  const perDecision = (row: Measurement): Measurement => ({
    name: row.name,
    nsPerOp: row.nsPerOp / size,
    rounds: row.rounds?.map((ns) => ns / size) ?? [],
  })
  const looped = compare(
    [
      {
        name: 'hand-written floor, the whole mix in one loop',
        run: () => {
          let allowed = 0
          for (let j = 0; j < size; j++) if (floor(j) !== false) allowed++
          return allowed
        },
      },
      {
        name: 'data-access-policy `decide`, the whole mix in one loop',
        run: () => {
          let allowed = 0
          for (let j = 0; j < size; j++) if (core(j).allowed) allowed++
          return allowed
        },
      },
    ],
    { iterations: 500, rounds: 15 },
  ).map(perDecision)
  const mix = buildMix()
  const fast = compare(
    [
      { name: 'data-access-policy `decide`', run: coreCandidate(mix, built) },
      { name: 'CASL `ability.can` (ability cached)', run: caslCandidate(mix) },
      {
        name: 'levels precomputed as numbers, a Set.has (the loop around the candidates)',
        run: baselineCandidate(mix),
      },
    ],
    { iterations: 300_000, rounds: 15 },
  )
  // casbin and Cedar are slower by orders of magnitude: fewer iterations, same mix.
  const slow = compare(
    [
      { name: 'data-access-policy `decide`', run: coreCandidate(mix, built) },
      { name: 'casbin `enforceSync` (ABAC model)', run: await casbinCandidate(mix) },
      { name: 'Cedar wasm `statefulIsAuthorized` (policy set preparsed)', run: cedarCandidate(mix) },
    ],
    { iterations: 4_000, rounds: 9 },
  )
  return { catalogue: { size: catalogueMix.length, rows: catalogueRows, looped }, fast, slow }
}

/**
 * Authentication, in process: what a host's request costs in `policy.authenticate` +
 * `policy.authorize` (the public API, the memory store, 1,000 distinct tokens), beside the
 * hand-written equivalent of design §11 (strict regex, one-shot SHA-256, Map by hash, Set of
 * scopes, awaited the same way) and the SHA-256 alone.
 */
export async function benchAuthentication(): Promise<Measurement[]> {
  const tokens = new MemoryTokenStore()
  const values: string[] = []
  // The hand-written store: a Map from the hex SHA-256 to what a decision needs.
  const byHash = new Map<
    string,
    { userId: string; scopes: Set<string>; expiresAt?: number; revokedAt?: number }
  >()
  for (let i = 0; i < 1000; i++) {
    const { record, value } = createApiToken({
      userId: `user${i}`,
      name: 't',
      scopes: 'data.metadata',
      now: Date.now(),
    })
    await tokens.save(record)
    values.push(value)
    byHash.set(record.hash, { userId: record.userId, scopes: new Set(record.scopes) })
  }
  const policy = createAccessPolicy({ tokens })
  // Flat strings, as Node's HTTP parser hands a host its headers: a template literal builds a cons
  // string, whose every character read in the token check goes through an indirection.
  const headers = values.map((value) => [Buffer.from(`Bearer ${value}`, 'latin1').toString('latin1')])
  const resource = {
    kind: 'dataset',
    publicLevel: 'none',
    userLevel: 'metadata',
  } as const satisfies DatasetResource
  const request = { protocol: 'https', clientAddress: '10.0.0.1' }
  const n = values.length
  const utf8 = new TextEncoder()
  const strict = /^Bearer (da[po]_[0-9A-Za-z]{38})$/
  const rank = { none: 0, overview: 1, metadata: 2, data: 3, edit: 4 } as const
  async function handWrittenAuthenticate(header: string) {
    const match = strict.exec(header)
    if (match === null) return undefined
    const found = byHash.get(nodeHash('sha256', match[1]!, 'hex'))
    const now = Date.now()
    if (found === undefined || found.revokedAt !== undefined) return undefined
    if (found.expiresAt !== undefined && !(now < found.expiresAt)) return undefined
    return found
  }
  return compareAsync(
    [
      {
        name: 'SHA-256 of the token alone (`crypto.hash`)',
        run: async (i) => hashTokenValue(values[i % n]!),
      },
      {
        // What hashTokenValue runs where node:crypto is unreachable (Workers without nodejs_compat).
        name: 'SHA-256 of the token alone, pure JS (`@noble/hashes`, Workers)',
        run: async (i) => bytesToHex(sha256(utf8.encode(values[i % n]!))),
      },
      {
        name: 'hand-written authenticate + decide (design §11)',
        run: async (i) => {
          const principal = await handWrittenAuthenticate(headers[i % n]![0]!)
          return (
            principal?.scopes.has('data.metadata') === true &&
            Math.max(rank[resource.publicLevel], rank[resource.userLevel]) >= rank.metadata
          )
        },
      },
      {
        name: 'data-access-policy: `policy.authenticate` + `policy.authorize`',
        run: async (i) => {
          const result = await policy.authenticate({ authorization: headers[i % n]!, ...request })
          return (
            result.ok && policy.authorize(result.principal, 'dataset.metadata', resource, request).allowed
          )
        },
      },
    ],
    { iterations: 20_000, rounds: 15 },
  )
}

function randomCidrs(count: number, seed: number): string[] {
  const next = seeded(seed)
  const out: string[] = []
  for (let i = 0; i < count; i++) {
    if (i % 2 === 0) {
      const prefix = 16 + (next() % 17)
      const value = next()
      const network = ((value >>> (32 - prefix)) << (32 - prefix)) >>> 0
      out.push(
        `${network >>> 24}.${(network >>> 16) & 255}.${(network >>> 8) & 255}.${network & 255}/${prefix}`,
      )
    } else {
      const words = [0x2001, 0x0db8, next() & 0xffff, next() & 0xffff]
      out.push(`${words.map((w) => w.toString(16)).join(':')}::/64`)
    }
  }
  return out
}

/** Allow-lists of 1, 100 and 10,000 CIDRs (mixed IPv4/IPv6): hits, misses and mapped clients. */
export function benchAllowLists(): { size: number; rows: Measurement[] }[] {
  const clients = {
    'IPv4 hit': '10.1.2.3',
    'IPv4 miss': '192.0.2.77',
    'IPv4-mapped hit': '::ffff:10.1.2.3',
    'IPv6 hit': '2001:db8:ffff:1::42',
    'IPv6 miss': '2001:db9::1',
  }
  const sizes = [1, 100, 10_000]
  // Every list size in one comparison, its rounds alternating: a machine that slows down partway
  // through a run slows every size alike instead of skewing the ratio between them.
  const candidates = sizes.flatMap((size) => {
    const rules =
      size === 1 ? ['10.0.0.0/8'] : ['10.0.0.0/8', '2001:db8:ffff:1::/64', ...randomCidrs(size - 2, size)]
    const restrictions = compileExportRestrictions({ allowedIps: rules })
    return Object.entries(clients).map(([name, address]) => ({
      name: `${size} ${name}`,
      run: () => checkClientAddress(restrictions, address),
    }))
  })
  const measured = compare(candidates, { iterations: 100_000, rounds: 11 })
  return sizes.map((size) => ({
    size,
    rows: measured
      .filter((row) => row.name.startsWith(`${size} `))
      .map((row) => ({ ...row, name: row.name.slice(`${size} `.length) })),
  }))
}
