/**
 * Random small seeds and requests against the reference server on all three frameworks:
 * - they answer alike (design §10, invariant 7);
 * - a dataset is listed iff `GET /datasets/:owner/:name` (dataset.overview) is allowed for the same
 *   token (invariant 6), checked end to end over HTTP.
 * Fixed seed, so a failure replays; fast-check prints the counterexample and its path.
 */
import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import { FRAMEWORKS } from '../../examples/server/flags.js'
import { loadSeed } from '../../examples/server/seed/load.js'
import { DATASET_LEVELS, PUBLIC_DATASET_LEVELS, SCOPES } from '../../src/index.js'
import { generateTokenValue } from '../../src/tokens/token-format.js'
import { type RawRequest, send } from './http-client.js'
import { closeAll, startAll } from './servers.js'

const USERS = ['ann', 'ben', 'cat'] as const
const ORGANIZATION = 'org'
const TOKEN_VALUES = USERS.map(() => generateTokenValue('api'))

const seedArbitrary = fc
  .record({
    userCount: fc.integer({ min: 1, max: 3 }),
    withOrganization: fc.boolean(),
    adminMask: fc.nat({ max: 7 }),
    datasets: fc.array(
      fc.record({
        ownerIndex: fc.nat({ max: 3 }),
        publicLevel: fc.constantFrom(...PUBLIC_DATASET_LEVELS),
        access: fc.array(fc.constantFrom(...DATASET_LEVELS), { minLength: 3, maxLength: 3 }),
        maxRecords: fc.option(fc.nat({ max: 2 }), { nil: undefined }),
        rows: fc.nat({ max: 3 }),
      }),
      { minLength: 1, maxLength: 5 },
    ),
    scopes: fc.array(fc.subarray(SCOPES.filter((scope) => scope !== 'public')), {
      minLength: 3,
      maxLength: 3,
    }),
  })
  .map(({ userCount, withOrganization, adminMask, datasets, scopes }) => {
    const users = USERS.slice(0, userCount)
    const owners = withOrganization ? [...users, ORGANIZATION] : [...users]
    return {
      users: users.map((handle) => ({ handle, password: 'pw' })),
      organizations: withOrganization
        ? [{ handle: ORGANIZATION, admins: users.filter((_, i) => (adminMask >> i) & 1), members: [] }]
        : [],
      datasets: datasets.map((dataset, i) => ({
        owner: owners[dataset.ownerIndex % owners.length]!,
        name: `d${i}`,
        publicLevel: dataset.publicLevel,
        access: Object.fromEntries(users.map((user, j) => [user, dataset.access[j]!])),
        ...(dataset.maxRecords === undefined
          ? {}
          : { exportRestrictions: { maxRecords: dataset.maxRecords } }),
        tables: [
          {
            name: 't',
            variables: [{ name: 'v', type: 'integer' }],
            rows: Array.from({ length: dataset.rows }, (_, r) => [r]),
          },
        ],
      })),
      tokens: users.map((user, i) => ({ user, name: 'random', scopes: scopes[i]!, value: TOKEN_VALUES[i]! })),
    }
  })

const requestArbitrary = fc.record({
  token: fc.integer({ min: -1, max: 2 }),
  dataset: fc.nat({ max: 4 }),
  route: fc.constantFrom('', '/metadata', '/tables/t/rows?maxResults=2', '/tables/t/rows'),
})

type RandomSeed = typeof seedArbitrary extends fc.Arbitrary<infer T> ? T : never

function authorization(seed: RandomSeed, token: number): Record<string, string> {
  const value = seed.tokens[token]?.value
  return value === undefined ? {} : { authorization: `Bearer ${value}` }
}

describe('properties of the reference server', () => {
  test('the three frameworks answer alike, and a dataset is listed iff its overview is allowed', async () => {
    await fc.assert(
      fc.asyncProperty(
        seedArbitrary,
        fc.array(requestArbitrary, { minLength: 1, maxLength: 6 }),
        async (raw, requests) => {
          const servers = await startAll(await loadSeed(raw))
          try {
            const ask = async (request: RawRequest) => {
              const answers = await Promise.all(
                FRAMEWORKS.map((framework) => send(servers[framework].port, request)),
              )
              expect(answers[1]).toEqual(answers[0])
              expect(answers[2]).toEqual(answers[0])
              return answers[0]!
            }

            for (const { token, dataset, route } of requests) {
              const target = raw.datasets[dataset % raw.datasets.length]!
              await ask({
                method: 'GET',
                path: `/api/v1/datasets/${target.owner}/${target.name}${route}`,
                headers: authorization(raw, token),
              })
            }

            const owners = [...new Set(raw.datasets.map((dataset) => dataset.owner))]
            for (let token = 0; token < raw.tokens.length; token++) {
              for (const owner of owners) {
                const kind = owner === ORGANIZATION ? 'organizations' : 'users'
                const headers = authorization(raw, token)
                const listing = await ask({
                  method: 'GET',
                  path: `/api/v1/${kind}/${owner}/datasets?maxResults=1000`,
                  headers,
                })
                expect(listing.status).toBe(200)
                const listed = (JSON.parse(listing.body) as { results: { name: string }[] }).results.map(
                  (each) => each.name,
                )
                const allowed: string[] = []
                for (const dataset of raw.datasets.filter((each) => each.owner === owner)) {
                  const overview = await ask({
                    method: 'GET',
                    path: `/api/v1/datasets/${owner}/${dataset.name}`,
                    headers,
                  })
                  expect([200, 404]).toContain(overview.status)
                  if (overview.status === 200) allowed.push(dataset.name)
                }
                expect(listed).toEqual(allowed.sort())
              }
            }
          } finally {
            await closeAll(servers)
          }
        },
      ),
      { numRuns: 30, seed: 20_250_101 },
    )
  }, 180_000)
})
