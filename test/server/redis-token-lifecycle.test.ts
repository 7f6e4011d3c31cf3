/**
 * Regenerate and leak reports with two reference servers on one Redis (`--store redis://…`, in
 * process, one Express and one Hono): a regenerated token's two values work on both instances
 * during the overlap and only the new one after; a leak report to one instance revokes on both, and
 * its replay to the other is refused, since seen reports are kept in the shared store.
 */
import { generateKeyPairSync, sign } from 'node:crypto'
import { afterAll, beforeAll, expect, test, vi } from 'vitest'
import { parseSecretScanningKeys } from '../../examples/server/leaks/secret-scanning-keys.js'
import { DEMO_SEED } from '../../examples/server/seed/demo.js'
import { loadSeed } from '../../examples/server/seed/load.js'
import { type StartedServer, startServer } from '../../examples/server/server.js'
import { type RedisServer, startRedisServer } from '../adapters/redis/redis-server.js'
import { csrfOf, signIn, tokenValueOf, WebClient } from './web-client.js'

const HOUR = 3_600_000
const github = generateKeyPairSync('ec', { namedCurve: 'prime256v1' })
const KEYS = parseSecretScanningKeys(
  JSON.stringify({
    public_keys: [{ key_identifier: 'k1', key: github.publicKey.export({ type: 'spki', format: 'pem' }) }],
  }),
  'keys.json',
)

let redis: RedisServer
let offset = 0
const now = () => Date.now() + offset
const servers: StartedServer[] = []

beforeAll(async () => {
  vi.spyOn(console, 'error').mockImplementation(() => {})
  redis = await startRedisServer()
  const seed = await loadSeed(DEMO_SEED)
  for (const framework of ['express', 'hono'] as const) {
    servers.push(
      await startServer({
        seed,
        framework,
        port: 0,
        now,
        store: { kind: 'redis', url: redis.url },
        secretScanningKeys: KEYS,
      }),
    )
  }
}, 60_000)

afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()))
  await redis?.stop()
  vi.restoreAllMocks()
})

async function status(server: StartedServer, value: string): Promise<number> {
  const response = await fetch(`${server.url}/api/v1/datasets/acme/claims/metadata`, {
    headers: { authorization: `Bearer ${value}` },
  })
  await response.arrayBuffer()
  return response.status
}

// Both instances answer `expected` for the value, within the store's second of staleness.
async function onBoth(value: string, expected: number): Promise<void> {
  for (const server of servers) {
    await vi.waitFor(async () => expect(await status(server, value)).toBe(expected), { timeout: 10_000 })
  }
}

test('regenerate, then a leak report and its replay, across two instances on one Redis', async () => {
  const [first, second] = servers as [StartedServer, StartedServer]
  const browser = new WebClient(first.port)
  expect((await signIn(browser, 'alice', 'alice-demo-password')).status).toBe(303)
  const list = await browser.get('/settings/tokens')
  const created = await browser.post('/settings/tokens', {
    csrf_token: csrfOf(list.body, '/settings/tokens'),
    name: 'shared',
    scopes: ['public', 'data.metadata'],
    lifetime: '30',
  })
  const old = tokenValueOf(created.body)!
  const record = (await first.app.tokens.listByOwner('alice')).find((token) => token.name === 'shared')!
  await onBoth(old, 200)

  const path = `/settings/tokens/${record.id}/regenerate`
  const confirm = await browser.get(path)
  const regenerated = await browser.post(path, { csrf_token: csrfOf(confirm.body, path), overlap: '1h' })
  const fresh = tokenValueOf(regenerated.body)!
  await onBoth(old, 200)
  await onBoth(fresh, 200)
  expect(
    (await second.app.tokens.listByOwner('alice')).filter((token) => token.id === record.id),
  ).toHaveLength(1)

  offset = HOUR
  try {
    await onBoth(old, 401)
    await onBoth(fresh, 200)
  } finally {
    offset = 0
  }

  const body = JSON.stringify([
    {
      token: fresh,
      type: 'data_access_policy_api_token',
      url: 'https://github.com/a/b/blob/c/d',
      source: 'content',
    },
  ])
  const post = (server: StartedServer) =>
    fetch(`${server.url}/secret-scanning/report`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'github-public-key-identifier': 'k1',
        'github-public-key-signature': sign('sha256', Buffer.from(body), github.privateKey).toString(
          'base64',
        ),
      },
      body,
    })
  expect((await post(first)).status).toBe(200)
  await onBoth(fresh, 401)
  expect((await post(second)).status).toBe(409)
  expect((await second.app.tokens.findById(record.id))?.revokedReason).toBe(
    'found public at https://github.com/a/b/blob/c/d',
  )
}, 120_000)
