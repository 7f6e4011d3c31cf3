import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { RedisTokenStore } from '../../adapters/redis/index.js'
import type { TokenStoreError } from '../../src/errors.js'
import { generateTokenValue } from '../../src/tokens/token-format.js'
import { hashTokenValue } from '../../src/tokens/token-hash.js'
import { createApiToken, revokeToken, type TokenRecord } from '../../src/tokens/token-record.js'
import { type RedisClusterServers, startRedisCluster } from '../adapters/redis/redis-cluster.js'
import { children, type Instance, startInstance, stopInstance } from './server-instances.js'
import { csrfOf, tokenValueOf, WebClient } from './web-client.js'

// Reference servers of different frameworks (child processes) on one Redis Cluster of three
// masters and three replicas that this file starts: tokens spread over every master, sessions and
// revocations shared, and a master killed by PID — 503 during the gap, never a 200 for a token
// revoked before it, and correct answers again once its replica is promoted, without a restart.

const SECOND = 1000
const PASSWORD = 'alice-password-for-cluster-tests'

const directory = mkdtempSync(join(tmpdir(), 'dap-cluster-servers-'))
const VALUES = Array.from({ length: 60 }, () => generateTokenValue('api'))
const SEED = {
  users: [{ handle: 'alice', password: PASSWORD }],
  organizations: [],
  datasets: [{ owner: 'alice', name: 'notes', publicLevel: 'none' }],
  tokens: VALUES.map((value, i) => ({ user: 'alice', name: `token ${i}`, scopes: ['data.overview'], value })),
}
const DATASET = '/api/v1/datasets/alice/notes'

let cluster: RedisClusterServers
let observer: RedisTokenStore
let a: Instance
let b: Instance
// Express joins for the writes after the failover, so that the pages are checked on all three frameworks.
let c: Instance
// Which tokens the tests below have used up (revoked), so that each picks fresh ones.
const used = new Set<string>()
// The masters before the failover test kills one; the shard whose replica it promotes is the one
// left without a replica.
let mastersBefore: number[] = []

beforeAll(async () => {
  cluster = await startRedisCluster()
  const seed = join(directory, 'seed.json')
  writeFileSync(seed, JSON.stringify(SEED))
  const common = ['--seed', seed, '--store', cluster.url, '--port', '0']
  ;[a, b, c] = await Promise.all([
    startInstance([...common, '--framework', 'fastify']),
    startInstance([...common, '--framework', 'hono']),
    startInstance([...common, '--framework', 'express']),
  ])
  observer = new RedisTokenStore({ redis: cluster.url })
  await observer.ready()
}, 60_000)

afterAll(async () => {
  await Promise.all([...children].map(stopInstance))
  await observer?.close()
  await cluster?.stop()
  rmSync(directory, { recursive: true, force: true })
})

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

async function status(instance: Instance, value: string): Promise<number> {
  const response = await fetch(`${instance.url}${DATASET}`, { headers: { authorization: `Bearer ${value}` } })
  await response.arrayBuffer()
  return response.status
}

/** Polls until `check` holds; resolves with the time it took. */
async function until(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<number> {
  const start = performance.now()
  while (!(await check())) {
    if (performance.now() - start > timeoutMs) throw new Error(`${what}: not within ${timeoutMs} ms`)
    await sleep(10)
  }
  return performance.now() - start
}

async function recordOf(value: string): Promise<TokenRecord> {
  const record = await observer.findByHash(hashTokenValue(value))
  if (record === undefined) throw new Error('no such token in Redis')
  return record
}

/** The master port that holds a token's record. */
function ownerOf(value: string): Promise<number> {
  return cluster.ownerOf(`dap:token:${hashTokenValue(value)}`)
}

/** Unused seed tokens whose records live on `port`. */
async function tokensOn(port: number, count: number): Promise<string[]> {
  const found: string[] = []
  for (const value of VALUES) {
    if (found.length === count) break
    if (!used.has(value) && (await ownerOf(value)) === port) found.push(value)
  }
  if (found.length < count) throw new Error(`fewer than ${count} unused tokens on ${port}`)
  for (const value of found) used.add(value)
  return found
}

async function signIn(instance: Instance): Promise<WebClient> {
  const client = new WebClient(instance.port)
  const form = await client.get('/signin')
  const signedIn = await client.post('/signin', {
    handle: 'alice',
    password: PASSWORD,
    csrf_token: csrfOf(form.body),
  })
  expect(signedIn.status).toBe(303)
  return client
}

/** A client of `instance` that carries another client's cookies (the same browser, another instance). */
function sameBrowser(client: WebClient, instance: Instance): WebClient {
  const other = new WebClient(instance.port)
  for (const [name, value] of client.jar) other.jar.set(name, value)
  return other
}

describe('two reference servers on one Redis Cluster', () => {
  test('the seed tokens spread over every master, and both instances serve them all', async () => {
    const masters = await cluster.masterPorts()
    expect(masters).toHaveLength(3)
    const perMaster = new Map<number, number>(masters.map((port) => [port, 0]))
    for (const value of VALUES) {
      const owner = await ownerOf(value)
      perMaster.set(owner, (perMaster.get(owner) ?? 0) + 1)
    }
    expect([...perMaster.keys()].sort()).toEqual(masters)
    // 60 random hashes over three masters, ~20 each: fewer than 5 on one has odds of about 1 in 30,000.
    for (const count of perMaster.values()) expect(count).toBeGreaterThanOrEqual(5)
    for (const instance of [a, b]) {
      const answers = await Promise.all(VALUES.map((value) => status(instance, value)))
      expect(answers.every((code) => code === 200)).toBe(true)
    }
    expect(await observer.listByOwner('alice')).toHaveLength(VALUES.length)
  })

  test('a session started on one instance is valid on the other; signing out on one ends it on both', async () => {
    const onA = await signIn(a)
    const onB = sameBrowser(onA, b)
    const list = await onB.get('/settings/tokens')
    expect(list.status).toBe(200)
    expect(list.body).toContain('token 0')
    // The sign-in form of one instance is accepted by the other (one CSRF key for all).
    const fresh = new WebClient(a.port)
    const form = await fresh.get('/signin')
    const elsewhere = sameBrowser(fresh, b)
    const signedIn = await elsewhere.post('/signin', {
      handle: 'alice',
      password: PASSWORD,
      csrf_token: csrfOf(form.body),
    })
    expect(signedIn.status).toBe(303)

    const out = await onB.post('/signout', { csrf_token: csrfOf(list.body, '/signout') })
    expect(out.status).toBe(303)
    const after = await onA.get('/settings/tokens')
    expect(after.status).toBe(303)
    expect(after.headers.location).toMatch(/^\/signin/)
  })

  test('a client registered (RFC 7591) on one instance is known to the others', async () => {
    const registered = await fetch(`${a.url}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        redirect_uris: ['http://127.0.0.1:8765/callback'],
        client_name: 'cluster agent',
      }),
    })
    expect(registered.status).toBe(201)
    const { client_id: clientId } = (await registered.json()) as { client_id: string }
    expect(clientId).toMatch(/^dyn_/)
    const authorize = (instance: Instance, id: string) =>
      fetch(
        `${instance.url}/oauth/authorize?${new URLSearchParams({
          response_type: 'code',
          client_id: id,
          redirect_uri: 'http://127.0.0.1:8765/callback',
          scope: 'data.overview',
          state: 's',
          code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
          code_challenge_method: 'S256',
        })}`,
        { redirect: 'manual' },
      ).then(async (response) => {
        await response.arrayBuffer()
        return response.status
      })
    // An unknown client is an error page; a known one goes on to sign-in, on every instance.
    expect(await authorize(b, 'dyn_0000000000000000000000000000000u')).toBe(400)
    for (const instance of [a, b, c]) expect(await authorize(instance, clientId)).not.toBe(400)
  })

  test('a revocation on the settings pages of one is 401 on the other within a second', async () => {
    const masters = await cluster.masterPorts()
    for (const port of masters) {
      const [value] = await tokensOn(port, 1)
      // Both instances have it cached.
      for (const instance of [a, b])
        for (let i = 0; i < 3; i++) expect(await status(instance, value!)).toBe(200)
      const { id } = await recordOf(value!)
      const client = await signIn(a)
      const action = `/settings/tokens/${id}/revoke`
      const list = await client.get('/settings/tokens')
      expect(
        (await client.post(action, { confirm: 'yes', csrf_token: csrfOf(list.body, action) })).status,
      ).toBe(303)
      const elapsed = await until(async () => (await status(b, value!)) === 401, 5 * SECOND, 'revoked on b')
      expect(elapsed).toBeLessThan(SECOND)
      expect(await status(a, value!)).toBe(401)
    }
  }, 30_000)

  // Last: it leaves the cluster with a promoted replica.
  test('a master killed by PID: 503 during the gap, never a 200 for a revoked token, correct again after promotion', async () => {
    mastersBefore = await cluster.masterPorts()
    const [victim] = mastersBefore
    const [valid, revoked] = await tokensOn(victim!, 2)
    await observer.update(revokeToken(await recordOf(revoked!), Date.now()))
    for (const instance of [a, b]) {
      await until(async () => (await status(instance, revoked!)) === 401, 5 * SECOND, 'revoked before')
      expect(await status(instance, valid!)).toBe(200)
    }
    await cluster.kill(victim!)
    const seen = { valid: new Set<number>(), revoked: new Set<number>() }
    const sample = async () => {
      const answers = await Promise.all(
        [a, b].flatMap((instance) => [status(instance, valid!), status(instance, revoked!)]),
      )
      for (const [i, code] of answers.entries()) seen[i % 2 === 0 ? 'valid' : 'revoked'].add(code)
      return answers
    }
    await until(async () => (await sample()).every((code) => code === 503), 10 * SECOND, '503 during the gap')
    await until(
      async () => (await sample()).every((code, i) => code === (i % 2 === 0 ? 200 : 401)),
      30 * SECOND,
      'recovery after promotion',
    )
    expect(seen.revoked.has(200)).toBe(false)
    expect([...seen.valid].sort()).toEqual([200, 503])
    expect([...seen.revoked].sort()).toEqual([401, 503])
    // Neither instance restarted.
    for (const instance of [a, b]) expect(instance.child.exitCode).toBeNull()
    // The node asked for the slot table learns of the promotion by gossip, and may lag the servers.
    await until(
      async () => {
        const masters = await cluster.masterPorts()
        return masters.length === 3 && !masters.includes(victim!)
      },
      30 * SECOND,
      'the slot table shows three masters, the killed one replaced',
    )
  }, 90_000)

  // After the failover: the promoted replica's shard has no replica until the killed node rejoins,
  // so no write there can be confirmed (`minReplicas` 1). What took effect is done, and said to be.
  test('after the failover, a shard without a replica: tokens are created, revocations are done (pending), both reported', async () => {
    await cluster.whenHealthy()
    const promoted = (await cluster.masterPorts()).find((port) => !mastersBefore.includes(port))
    expect(promoted).toBeDefined()

    // The library: a new token on that shard succeeds, unreplicated, with the shortfall reported.
    const reported: TokenStoreError[] = []
    const store = new RedisTokenStore({ redis: cluster.url, onError: (error) => reported.push(error) })
    try {
      await store.ready()
      let created: { record: TokenRecord; value: string } | undefined
      for (let i = 0; created === undefined; i++) {
        if (i > 200) throw new Error('no token hash landed on the promoted shard')
        const candidate = createApiToken({
          userId: 'alice',
          name: `after ${i}`,
          scopes: 'data.overview',
          now: Date.now(),
        })
        if ((await ownerOf(candidate.value)) === promoted) created = candidate
      }
      expect(await store.save(created.record)).toEqual({ replicated: false })
      expect(reported.map((error) => error.message)).toContainEqual(
        `saved token ${created.record.id}, but fewer than 1 replicas confirmed it: a failover before they do would lose it`,
      )
      expect(await status(a, created.value)).toBe(200)
      // Revoked behind the servers' backs: done at once, confirmation pending in the background.
      expect(await store.update(revokeToken(created.record, Date.now()))).toEqual({ replicated: false })
      expect(store.pendingConfirmations).toBe(1)
      await until(
        async () => (await status(b, created.value)) === 401,
        5 * SECOND,
        'the revocation seen by b',
      )
    } finally {
      await store.close()
    }

    for (const [n, instance] of [a, b, c].entries()) {
      // The pages: a revocation on that shard is reported done and pending, and the API refuses it.
      const [value] = await tokensOn(promoted!, 1)
      const { id, name } = await recordOf(value!)
      const client = await signIn(instance)
      const action = `/settings/tokens/${id}/revoke`
      const list = await client.get('/settings/tokens')
      const revoked = await client.post(action, { confirm: 'yes', csrf_token: csrfOf(list.body, action) })
      expect(revoked.status).toBe(303)
      const after = await client.get('/settings/tokens')
      expect(after.body).toContain(
        `Revoked “${name}” (replication pending). Requests with it are refused from now on.`,
      )
      for (const any of [a, b, c]) {
        await until(async () => (await status(any, value!)) === 401, 5 * SECOND, 'revoked on every instance')
      }

      // Creating tokens on the pages never fails; one that lands on that shard is reported.
      for (let i = 0; ; i++) {
        if (i > 30) throw new Error('no token created on the pages landed on the promoted shard')
        const page = await client.get('/settings/tokens')
        const created = await client.post('/settings/tokens', {
          csrf_token: csrfOf(page.body, '/settings/tokens'),
          name: `page token ${n}.${i}`,
          scopes: ['data.overview'],
          expiresAt: '',
        })
        expect(created.status).toBe(200)
        const fresh = tokenValueOf(created.body)!
        const got = await status(instance, fresh)
        expect(got).toBe(200)
        if ((await ownerOf(fresh)) === promoted) {
          const { id: freshId } = await recordOf(fresh)
          expect(instance.output()).toContain(`saved token ${freshId}, but fewer than 1 replicas`)
          break
        }
      }
    }
  }, 120_000)
})
