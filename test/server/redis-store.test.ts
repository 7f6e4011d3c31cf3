import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { RedisTokenStore } from '../../adapters/redis/index.js'
import { RedisPendingConsents } from '../../examples/server/oauth/redis-pending-consents.js'
import { parseScopes } from '../../src/index.js'
import { generateTokenValue } from '../../src/tokens/token-format.js'
import { hashTokenValue } from '../../src/tokens/token-hash.js'
import { rescopeToken, revokeToken, type TokenRecord } from '../../src/tokens/token-record.js'
import { type RedisServer, startRedisServer } from '../adapters/redis/redis-server.js'
import { pkcePair } from '../oauth/fixtures.js'
import { PageAgent } from './oauth-agent.js'
import { authorizeThroughPages, authorizeUrl, postForm } from './oauth-fixtures.js'
import { children, type Instance, MAIN, ROOT, startInstance, stopInstance } from './server-instances.js'
import { csrfOf, tokenValueOf, WebClient } from './web-client.js'

// Two reference servers (`--store redis://…`, child processes) on one Redis this file starts: what
// one instance does, the other sees within a second; Redis going away is 503 on both, and its
// return is recovery without a restart. A third client, a RedisTokenStore of the test's own, looks
// at the shared state and makes changes behind the servers' backs.

const SECOND = 1000
// How long a wait for a condition may last before it fails: generous, so that a busy machine never
// fails a test the code passes. The contract's own bounds (a second) are asserted on the measured time.
const PATIENCE = 10 * SECOND
// A test's own bound: these start servers and send thousands of requests, which a busy machine slows
// several times over; only a hang should fail it.
const PATIENT_TEST = 120 * SECOND
const PASSWORD = 'alice-password-for-redis-tests'

const directory = mkdtempSync(join(tmpdir(), 'dap-redis-servers-'))
const VALID = Array.from({ length: 6 }, () => generateTokenValue('api'))
const REVOKED = Array.from({ length: 2 }, () => generateTokenValue('api'))
const LOAD = { revoked: generateTokenValue('api'), rescoped: generateTokenValue('api') }
const PAGES = generateTokenValue('api')
const KILLED = generateTokenValue('api')
// Changed in a later seed that a third instance starts with (design §9: the seed joins the store).
const RESEED = { revoked: generateTokenValue('api'), rescoped: generateTokenValue('api') }
const SEED = {
  users: [{ handle: 'alice', password: PASSWORD }],
  organizations: [],
  // Private: a token needs data.overview to see it, so removing the scope turns 200 into 404.
  datasets: [{ owner: 'alice', name: 'notes', publicLevel: 'none' }],
  clients: [{ id: 'cli', redirectUris: ['http://127.0.0.1:8765/cb'] }],
  tokens: [
    ...[...VALID, LOAD.revoked, LOAD.rescoped, PAGES, KILLED, RESEED.revoked, RESEED.rescoped].map(
      (value, i) => ({
        user: 'alice',
        name: `token ${i}`,
        scopes: ['data.overview'],
        value,
      }),
    ),
    ...REVOKED.map((value, i) => ({
      user: 'alice',
      name: `old ${i}`,
      scopes: ['data.overview'],
      value,
      revoked: true,
    })),
  ],
}
const DATASET = '/api/v1/datasets/alice/notes'

let redis: RedisServer
let observer: RedisTokenStore
let a: Instance
let b: Instance

beforeAll(async () => {
  redis = await startRedisServer()
  const seed = join(directory, 'seed.json')
  writeFileSync(seed, JSON.stringify(SEED))
  // One public URL for both, as behind a load balancer: the tokens either issues are for the API
  // both serve (RFC 8707 audience `{public-url}/api/v1`).
  const common = [
    '--seed',
    seed,
    '--store',
    redis.url,
    '--port',
    '0',
    '--public-url',
    'http://127.0.0.1:8443',
  ]
  // Two frameworks: the instances share state, not code paths.
  ;[a, b] = await Promise.all([
    startInstance([...common, '--framework', 'fastify']),
    startInstance([...common, '--framework', 'hono']),
  ])
  observer = new RedisTokenStore({ redis: redis.url })
  await observer.ready()
}, PATIENT_TEST)

afterAll(async () => {
  await Promise.all([...children].map(stopInstance))
  await observer?.close()
  await redis?.stop()
  rmSync(directory, { recursive: true, force: true })
})

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

async function status(instance: Instance, value: string): Promise<number> {
  const response = await fetch(`${instance.url}${DATASET}`, { headers: { authorization: `Bearer ${value}` } })
  await response.arrayBuffer()
  return response.status
}

/** Polls until `instance` answers `expected` for `value`; resolves with the time it took. */
async function until(
  instance: Instance,
  value: string,
  expected: number,
  timeoutMs: number,
): Promise<number> {
  const start = performance.now()
  for (;;) {
    if ((await status(instance, value)) === expected) return performance.now() - start
    if (performance.now() - start > timeoutMs) throw new Error(`no ${expected} within ${timeoutMs} ms`)
    await sleep(10)
  }
}

async function recordOf(value: string): Promise<TokenRecord> {
  const record = await observer.findByHash(hashTokenValue(value))
  if (record === undefined) throw new Error('no such token in Redis')
  return record
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

describe('two reference servers on one Redis', () => {
  test('serve the same seed tokens, saved to Redis once', async () => {
    for (const instance of [a, b]) {
      expect(await status(instance, VALID[0]!)).toBe(200)
      expect(await status(instance, REVOKED[0]!)).toBe(401)
      expect(await status(instance, generateTokenValue('api'))).toBe(401)
    }
    expect(await observer.listByOwner('alice')).toHaveLength(SEED.tokens.length)
  })

  test('a token created on the settings pages of one works on the other at once', async () => {
    const client = await signIn(a)
    const list = await client.get('/settings/tokens')
    const created = await client.post('/settings/tokens', {
      name: 'made on a',
      scopes: ['data.overview'],
      expiresAt: '',
      csrf_token: csrfOf(list.body, '/settings/tokens'),
    })
    const value = tokenValueOf(created.body)
    expect(value).toBeDefined()
    expect(await status(b, value!)).toBe(200)
  })

  test('share OAuth state: a device code issued by one is known to the other', async () => {
    const { challenge, verifier } = pkcePair()
    const started = await fetch(`${a.url}/oauth/device_authorization`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        client_id: 'cli',
        scope: 'data.overview',
        code_challenge: challenge,
        code_challenge_method: 'S256',
      }),
    })
    expect(started.status).toBe(200)
    const { device_code } = (await started.json()) as { device_code: string }
    const polled = await fetch(`${b.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'urn:ietf:params:oauth:grant-type:device_code',
        device_code,
        client_id: 'cli',
        code_verifier: verifier,
      }),
    })
    // Pending, not invalid_grant: instance b found the grant instance a saved.
    expect(await polled.json()).toMatchObject({ error: 'authorization_pending' })
  })

  test('a token revoked through POST /oauth/revoke on one is refused by the other within a second', async () => {
    const { challenge, verifier } = pkcePair()
    const url = authorizeUrl(a.url, {
      response_type: 'code',
      client_id: 'cli',
      redirect_uri: 'http://127.0.0.1:8765/cb',
      scope: 'data.overview',
      state: 's',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    })
    const { callback } = await authorizeThroughPages(new PageAgent(a.url), url, {
      handle: 'alice',
      password: PASSWORD,
    })
    const issued = await postForm(`${a.url}/oauth/token`, {
      grant_type: 'authorization_code',
      code: callback.searchParams.get('code')!,
      redirect_uri: 'http://127.0.0.1:8765/cb',
      code_verifier: verifier,
      client_id: 'cli',
    })
    const token = issued.body.access_token as string
    // Both instances have the token in their caches.
    for (const instance of [a, b]) for (let i = 0; i < 3; i++) expect(await status(instance, token)).toBe(200)
    const revoked = await postForm(`${a.url}/oauth/revoke`, { token, client_id: 'cli' })
    expect(revoked.status).toBe(200)
    const elapsed = await until(b, token, 401, PATIENCE)
    expect(elapsed).toBeLessThan(SECOND)
    expect(await status(a, token)).toBe(401)
  })

  test('a revocation on the settings pages of one takes effect on the other within a second', async () => {
    // Both instances have the token in their caches.
    for (const instance of [a, b]) for (let i = 0; i < 3; i++) expect(await status(instance, PAGES)).toBe(200)
    const { id } = await recordOf(PAGES)
    const client = await signIn(a)
    const action = `/settings/tokens/${id}/revoke`
    const list = await client.get('/settings/tokens')
    const revoked = await client.post(action, { confirm: 'yes', csrf_token: csrfOf(list.body, action) })
    expect(revoked.status).toBe(303)
    const elapsed = await until(b, PAGES, 401, PATIENCE)
    expect(elapsed).toBeLessThan(SECOND)
    expect(await status(a, PAGES)).toBe(401)
  })

  test(
    'a third instance with a seed that revokes a stored token revokes it on all; changed scopes only warn',
    async () => {
      for (const instance of [a, b]) {
        expect(await status(instance, RESEED.revoked)).toBe(200)
        expect(await status(instance, RESEED.rescoped)).toBe(200)
      }
      const edited = {
        ...SEED,
        tokens: SEED.tokens.map((token) => {
          if (token.value === RESEED.revoked) return { ...token, revoked: true }
          // Without data.overview this token would get 404; the stored scopes stand, so it does not.
          if (token.value === RESEED.rescoped) return { ...token, scopes: ['wokflow.read'] }
          return token
        }),
      }
      const file = join(directory, 'edited-seed.json')
      writeFileSync(file, JSON.stringify(edited))
      const c = await startInstance([
        '--seed',
        file,
        '--store',
        redis.url,
        '--port',
        '0',
        '--framework',
        'express',
      ])
      try {
        expect((await recordOf(RESEED.revoked)).revokedAt).toBeDefined()
        // The instances that were running see the revocation within a second, like any other.
        await Promise.all([until(a, RESEED.revoked, 401, PATIENCE), until(b, RESEED.revoked, 401, PATIENCE)])
        expect(await status(c, RESEED.revoked)).toBe(401)
        for (const instance of [a, b, c]) expect(await status(instance, RESEED.rescoped)).toBe(200)
        expect((await recordOf(RESEED.rescoped)).scopes).toEqual(['public', 'data.overview'])
        const warnings = c
          .output()
          .split('\n')
          .filter((line) => line.startsWith('warning: '))
        expect(warnings).toEqual([
          expect.stringMatching(
            /^warning: seed tokens\[\d+\] \("token \d+" of alice, dap_…[0-9A-Za-z]{4}\) differs from the stored token, which stands: scopes "public data\.overview" \(seed: "public wokflow\.read"\)$/,
          ),
        ])
        for (const value of Object.values(RESEED)) expect(c.output()).not.toContain(value.slice(4, -4))
      } finally {
        await stopInstance(c.child)
      }
    },
    PATIENT_TEST,
  )

  test(
    'under sustained load on both, with changes made mid-run, no decision is wrong',
    async () => {
      const total = 2000
      const concurrency = 12
      const intervalMs = 1.5 // ~3 s in all, so that each change has more than a second of traffic after it
      const kinds = [
        ...VALID.map((value) => ({ value, kind: 'valid' as const })),
        ...REVOKED.map((value) => ({ value, kind: 'revoked' as const })),
        { value: generateTokenValue('api'), kind: 'unknown' as const },
        { value: LOAD.revoked, kind: 'revokedMidRun' as const },
        { value: LOAD.rescoped, kind: 'rescopedMidRun' as const },
      ]
      const changes = {
        revokedMidRun: { startedAt: Number.POSITIVE_INFINITY, doneAt: Number.POSITIVE_INFINITY, after: 401 },
        rescopedMidRun: { startedAt: Number.POSITIVE_INFINITY, doneAt: Number.POSITIVE_INFINITY, after: 404 },
      }
      const results: {
        kind: (typeof kinds)[number]['kind']
        status: number
        sentAt: number
        doneAt: number
      }[] = []
      const start = performance.now()
      let next = 0
      const worker = async () => {
        for (let i = next++; i < total; i = next++) {
          const wait = start + i * intervalMs - performance.now()
          if (wait > 0) await sleep(wait)
          const { value, kind } = kinds[i % kinds.length]!
          const sentAt = performance.now()
          const code = await status(i % 2 === 0 ? a : b, value)
          results.push({ kind, status: code, sentAt, doneAt: performance.now() })
        }
      }
      const change = async (
        atMs: number,
        kind: keyof typeof changes,
        apply: (r: TokenRecord) => TokenRecord,
      ) => {
        await sleep(atMs)
        const record = await recordOf(kind === 'revokedMidRun' ? LOAD.revoked : LOAD.rescoped)
        changes[kind].startedAt = performance.now()
        await observer.update(apply(record))
        changes[kind].doneAt = performance.now()
      }
      await Promise.all([
        ...Array.from({ length: concurrency }, worker),
        change(600, 'revokedMidRun', (r) => revokeToken(r, Date.now())),
        change(1200, 'rescopedMidRun', (r) => rescopeToken(r, '')),
      ])
      const expected = { valid: 200, revoked: 401, unknown: 401 }
      const wrong = results.filter(({ kind, status: code, sentAt, doneAt }) => {
        if (kind === 'valid' || kind === 'revoked' || kind === 'unknown') return code !== expected[kind]
        const { startedAt, doneAt: changedAt, after } = changes[kind]
        if (doneAt < startedAt) return code !== 200
        if (sentAt > changedAt + SECOND) return code !== after
        return code !== 200 && code !== after
      })
      expect(results).toHaveLength(total)
      expect(wrong).toEqual([])
      // The run did cover each change and more than a second after it.
      for (const kind of ['revokedMidRun', 'rescopedMidRun'] as const) {
        const { doneAt, after } = changes[kind]
        const late = results.filter((r) => r.kind === kind && r.sentAt > doneAt + SECOND)
        expect(late.length).toBeGreaterThan(10)
        expect(late.every((r) => r.status === after)).toBe(true)
      }
    },
    PATIENT_TEST,
  )

  test(
    'Redis killed: 503 on both within a second; restarted: both recover without a restart',
    async () => {
      for (const instance of [a, b])
        for (let i = 0; i < 3; i++) expect(await status(instance, KILLED)).toBe(200)
      await redis.snapshot()
      await redis.kill()
      const killedAt = performance.now()
      await Promise.all([until(a, KILLED, 503, PATIENCE), until(b, KILLED, 503, PATIENCE)])
      expect(performance.now() - killedAt).toBeLessThan(SECOND)
      // Down is down: nothing is allowed from a cache while Redis is away.
      await sleep(1200)
      for (const instance of [a, b]) {
        expect(await status(instance, KILLED)).toBe(503)
        expect(await status(instance, REVOKED[0]!)).toBe(503)
      }
      await redis.restart()
      await Promise.all([until(a, KILLED, 200, PATIENCE), until(b, KILLED, 200, PATIENCE)])
      for (const instance of [a, b]) {
        expect(await status(instance, REVOKED[0]!)).toBe(401)
        expect(await status(instance, PAGES)).toBe(401)
      }
    },
    PATIENT_TEST,
  )

  test(
    'a server whose Redis does not answer does not start: exit code 1 and one line',
    async () => {
      const unreachable = redis.url.replace(/:\d+$/, ':1')
      const child = spawn(
        process.execPath,
        ['--import', 'tsx', MAIN, '--store', unreachable, '--port', '0'],
        {
          cwd: ROOT,
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      )
      children.add(child)
      let stderr = ''
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk))
      const code = await new Promise<number | null>((resolve) => child.once('exit', resolve))
      expect(code).toBe(1)
      expect(stderr).toBe(`cannot start the server: cannot reach Redis at ${unreachable}\n`)
    },
    PATIENT_TEST,
  )
})

describe('pending consents on Redis keep the audience (RFC 8707)', () => {
  test('a code consent and a device consent come back with the resources they were shown with', async () => {
    const consents = new RedisPendingConsents(redis.url, Date.now)
    await consents.ready()
    try {
      const audience = ['https://data.example.org/api/v1', 'https://reports.example.org/mcp']
      const request = {
        redirectUri: 'http://127.0.0.1:8765/cb',
        scopes: parseScopes(['data.metadata']),
        codeChallenge: pkcePair().challenge,
        audience,
      }
      const code = await consents.create({ kind: 'code', request, client: undefined }, 'user:alice', 'sa')
      if ('full' in code) throw new Error('full')
      expect(await consents.take(code.id, 'sa')).toMatchObject({ kind: 'code', request: { audience } })
      const grant = {
        grantId: 'g'.repeat(64),
        userCode: 'WDJB-MJHT',
        scopes: parseScopes(['data.metadata']),
        audience: audience.slice(1),
        expiresAt: Date.now() + 60_000,
      }
      const device = await consents.create({ kind: 'device', grant, client: undefined }, 'user:alice', 'sa')
      if ('full' in device) throw new Error('full')
      expect(await consents.take(device.id, 'sa')).toMatchObject({
        kind: 'device',
        grant: { audience: audience.slice(1) },
      })
    } finally {
      await consents.close()
    }
  })
})
