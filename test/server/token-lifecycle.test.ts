/**
 * Token lifecycle over real HTTP on Express, Fastify and Hono (issue 30): lifetimes chosen at
 * creation and capped by --max-token-lifetime, expiring-soon marks, last use with its network
 * (store writes counted), Regenerate with an overlap (both values inside it, only the new one
 * after, revocation ends both) and the GitHub secret-scanning leak endpoint. Each framework has
 * its own clock, moved by the tests instead of waiting.
 */
import { generateKeyPairSync, type KeyObject, sign } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest'
import { type App, createApp } from '../../examples/server/app.js'
import { FRAMEWORKS, type Framework } from '../../examples/server/flags.js'
import { startExpress } from '../../examples/server/http/express.js'
import { startFastify } from '../../examples/server/http/fastify.js'
import type { RunningServer } from '../../examples/server/http/front-door.js'
import { startHono } from '../../examples/server/http/hono.js'
import { LEAK_REPORT_PATH, MAX_LEAK_REPORT_BYTES } from '../../examples/server/leaks/leak-reports.js'
import { parseSecretScanningKeys } from '../../examples/server/leaks/secret-scanning-keys.js'
import { bodyLimits } from '../../examples/server/request/body.js'
import { MAX_BODY_BYTES } from '../../examples/server/routes/route-set.js'
import { DEMO_SEED } from '../../examples/server/seed/demo.js'
import { loadSeed } from '../../examples/server/seed/load.js'
import { hashTokenValue, MemoryTokenStore, type TokenRecord } from '../../src/index.js'
import { DAY_MS } from '../../src/testing/index.js'
import { generateTokenValue } from '../../src/tokens/token-format.js'
import { csrfOf, signIn, tokenValueOf, WebClient } from './web-client.js'

const BINDINGS = { express: startExpress, fastify: startFastify, hono: startHono } as const
const HOUR = 3_600_000
const CAP_DAYS = 90

// GitHub's signing key, and another that is not configured.
const github = generateKeyPairSync('ec', { namedCurve: 'prime256v1' })
const stranger = generateKeyPairSync('ec', { namedCurve: 'prime256v1' })
const KEY_ID = 'bcb53661c06b4728e59d897fb6165d5c9cda0fd9cdf9d09ead458168deb7518c'
const KEYS_FILE = JSON.stringify({
  public_keys: [
    {
      key_identifier: KEY_ID,
      key: github.publicKey.export({ type: 'spki', format: 'pem' }),
      is_current: true,
    },
  ],
})

interface Running {
  readonly server: RunningServer
  readonly app: App
  /** Moves this server's clock. */
  advance(ms: number): void
  /** Touches the store has been asked for (each is one write on the memory store). */
  touches(): number
}

const running = {} as Record<Framework, { open: Running; capped: Running }>

async function start(framework: Framework, capped: boolean): Promise<Running> {
  let offset = 0
  const now = () => Date.now() + offset
  const tokens = new MemoryTokenStore()
  let touches = 0
  const touch = tokens.touch.bind(tokens)
  tokens.touch = (id, at, network) => {
    touches++
    return touch(id, at, network)
  }
  const app = await createApp(await loadSeed(DEMO_SEED), {
    now,
    tokens,
    ...(capped
      ? {
          maxTokenLifetimeDays: CAP_DAYS,
          secretScanningKeys: parseSecretScanningKeys(KEYS_FILE, 'keys.json'),
        }
      : {}),
  })
  const server = await BINDINGS[framework](app, { host: '127.0.0.1', port: 0, trustProxy: false })
  return {
    server,
    app,
    advance: (ms) => {
      offset += ms
    },
    touches: () => touches,
  }
}

beforeAll(async () => {
  // Revocations by leak report are logged on stderr; keep the test output clean.
  vi.spyOn(console, 'error').mockImplementation(() => {})
  await Promise.all(
    FRAMEWORKS.map(async (framework) => {
      running[framework] = { open: await start(framework, false), capped: await start(framework, true) }
    }),
  )
})

afterAll(async () => {
  await Promise.all(
    Object.values(running).flatMap(({ open, capped }) => [open.server.close(), capped.server.close()]),
  )
  vi.restoreAllMocks()
})

async function api(port: number, value: string) {
  const response = await fetch(`http://127.0.0.1:${port}/api/v1/datasets/acme/claims/metadata`, {
    headers: { authorization: `Bearer ${value}` },
  })
  const body = (await response.json()) as { error?: { code?: string } }
  return { status: response.status, code: body.error?.code }
}

let names = 0

/** Creates a token through the pages; the value and the stored record. */
async function createToken(
  target: Running,
  browser: WebClient,
  fields: Record<string, string>,
): Promise<{ value: string; record: TokenRecord }> {
  const list = await browser.get('/settings/tokens')
  const name = `lifecycle ${++names}`
  const created = await browser.post('/settings/tokens', {
    csrf_token: csrfOf(list.body, '/settings/tokens'),
    name,
    scopes: ['public', 'data.metadata'],
    ...fields,
  })
  expect(created.status, created.body).toBe(200)
  const value = tokenValueOf(created.body)!
  const record = (await target.app.tokens.listByOwner('alice')).find((token) => token.name === name)!
  return { value, record }
}

async function signedIn(target: Running): Promise<WebClient> {
  const browser = new WebClient(target.server.port)
  expect((await signIn(browser, 'alice', 'alice-demo-password')).status).toBe(303)
  return browser
}

function lifetimeOptions(page: string): string[] {
  const select = /<select id="new-lifetime" name="lifetime"[^>]*>(.*?)<\/select>/s.exec(page)?.[1] ?? ''
  return [...select.matchAll(/<option value="([^"]+)"/g)].map((match) => match[1]!)
}

function signed(body: string, key: KeyObject = github.privateKey, keyId = KEY_ID): Record<string, string> {
  return {
    'content-type': 'application/json',
    'github-public-key-identifier': keyId,
    'github-public-key-signature': sign('sha256', Buffer.from(body), key).toString('base64'),
  }
}

async function report(target: Running, body: string, headers: Record<string, string>) {
  const response = await fetch(`${target.server.url}/secret-scanning/report`, {
    method: 'POST',
    headers,
    body,
  })
  return { status: response.status, body: (await response.json()) as unknown }
}

describe.each(FRAMEWORKS)('%s', (framework) => {
  const open = () => running[framework].open
  const capped = () => running[framework].capped

  describe('lifetimes', () => {
    test('creation offers 7, 30, 60, 90 and 365 days, a date or none; each sets the expiry', async () => {
      const target = open()
      const browser = await signedIn(target)
      const list = await browser.get('/settings/tokens')
      expect(lifetimeOptions(list.body)).toEqual(['7', '30', '60', '90', '365', 'date', 'none'])
      expect(list.body).toContain('<option value="30" selected>30 days</option>')
      for (const days of [7, 30, 60, 90, 365]) {
        const { record } = await createToken(target, browser, { lifetime: String(days) })
        expect(record.lifetimeDays).toBe(days)
        expect(record.expiresAt! - record.createdAt).toBe(days * DAY_MS)
      }
      const dated = await createToken(target, browser, { lifetime: 'date', expiresAt: '2099-01-31' })
      expect(dated.record.expiresAt).toBe(Date.UTC(2099, 0, 31))
      const forever = await createToken(target, browser, { lifetime: 'none' })
      expect(forever.record.expiresAt).toBeUndefined()
    })

    test('under the cap, a token without expiry from before it cannot be regenerated', async () => {
      const target = capped()
      const browser = await signedIn(target)
      // The demo seed's "reader" token never expires.
      const reader = (await target.app.tokens.listByOwner('alice')).find((token) => token.name === 'reader')!
      const path = `/settings/tokens/${reader.id}/regenerate`
      const confirm = await browser.get(path)
      const refused = await browser.post(path, { csrf_token: csrfOf(confirm.body, path), overlap: '1h' })
      expect(refused.status).toBe(409)
      expect(refused.body).toContain('token lifetimes are capped at 90 days')
      expect(tokenValueOf(refused.body)).toBeUndefined()
      expect(await target.app.tokens.findById(reader.id)).toEqual(reader)
    })

    test('the cap: nothing longer and no "none" offered; a longer request is refused naming the cap', async () => {
      const target = capped()
      const browser = await signedIn(target)
      const list = await browser.get('/settings/tokens')
      expect(lifetimeOptions(list.body)).toEqual(['7', '30', '60', '90', 'date'])
      expect(list.body).toContain('caps token lifetimes at 90 days')
      const before = (await target.app.tokens.listByOwner('alice')).length
      const csrf = csrfOf(list.body, '/settings/tokens')
      for (const fields of [
        { lifetime: '365' },
        { lifetime: 'none' },
        { lifetime: 'date', expiresAt: '2099-01-31' },
        {},
      ]) {
        const refused = await browser.post('/settings/tokens', {
          csrf_token: csrf,
          name: 'too long',
          scopes: ['public'],
          ...fields,
        })
        expect(refused.status).toBe(400)
        expect(refused.body).toContain('token lifetimes are capped at 90 days on this server')
        expect(tokenValueOf(refused.body)).toBeUndefined()
      }
      expect((await target.app.tokens.listByOwner('alice')).length).toBe(before)
      const { record } = await createToken(target, browser, { lifetime: '90' })
      expect(record.expiresAt! - record.createdAt).toBe(90 * DAY_MS)
    })

    test('tokens expiring within 7 days are marked; an expired token is 401 invalid_token', async () => {
      const target = open()
      const browser = await signedIn(target)
      const soon = await createToken(target, browser, { lifetime: '7' })
      const later = await createToken(target, browser, { lifetime: '30' })
      const row = (page: string, record: TokenRecord) =>
        page.split('<tr>').find((each) => each.includes(`>${record.name}<`)) ?? ''
      const list = (await browser.get('/settings/tokens')).body
      expect(row(list, soon.record)).toContain('Expires soon')
      expect(row(list, later.record)).not.toContain('Expires soon')
      expect((await api(target.server.port, soon.value)).status).toBe(200)
      target.advance(7 * DAY_MS)
      try {
        expect(await api(target.server.port, soon.value)).toEqual({ status: 401, code: 'invalid_token' })
        // An expired token cannot be regenerated: no control for it, and a post is refused. (A week
        // later the session is over: sign in again.)
        const again = await signedIn(target)
        const page = (await again.get('/settings/tokens')).body
        expect(row(page, soon.record)).toContain('<strong>Expired</strong>')
        expect(row(page, soon.record)).not.toContain('Regenerate')
        const path = `/settings/tokens/${soon.record.id}/regenerate`
        const confirm = await again.get(path)
        const refused = await again.post(path, { csrf_token: csrfOf(confirm.body, path), overlap: '1h' })
        expect(refused.status).toBe(409)
        expect(refused.body).toContain('This token has expired')
        expect((await api(target.server.port, later.value)).status).toBe(200)
        expect(row(page, later.record)).not.toContain('Expires soon')
      } finally {
        target.advance(-7 * DAY_MS)
      }
    })
  })

  test('last use: one store write per interval under load, with the network beside the time', async () => {
    const target = open()
    const browser = await signedIn(target)
    const { value, record } = await createToken(target, browser, { lifetime: '30' })
    const before = target.touches()
    for (let interval = 1; interval <= 3; interval++) {
      const answers = await Promise.all(Array.from({ length: 40 }, () => api(target.server.port, value)))
      expect(answers.every((answer) => answer.status === 200)).toBe(true)
      await vi.waitFor(() => expect(target.touches() - before).toBe(interval), { timeout: 10_000 })
      target.advance(60_000)
    }
    target.advance(-180_000)
    expect(target.touches() - before).toBe(3)
    const stored = await target.app.tokens.findById(record.id)
    expect(stored?.lastUsedFrom).toBe('127.0.0.1')
    const row = (await browser.get('/settings/tokens')).body
      .split('<tr>')
      .find((each) => each.includes(`>${record.name}<`))
    expect(row).toContain('from <code>127.0.0.1</code>')
  })

  describe('regenerate', () => {
    test('both values work inside the overlap, only the new one after it; same id, name and scopes', async () => {
      const target = open()
      const browser = await signedIn(target)
      const { value: old, record } = await createToken(target, browser, { lifetime: '30' })
      const confirm = await browser.get(`/settings/tokens/${record.id}/regenerate`)
      expect(confirm.status).toBe(200)
      for (const choice of ['none', '1h', '24h', '7d']) expect(confirm.body).toContain(`value="${choice}"`)
      const regenerated = await browser.post(`/settings/tokens/${record.id}/regenerate`, {
        csrf_token: csrfOf(confirm.body, `/settings/tokens/${record.id}/regenerate`),
        overlap: '1h',
      })
      expect(regenerated.status).toBe(200)
      expect(regenerated.body).toContain('The previous value keeps working until')
      const fresh = tokenValueOf(regenerated.body)!
      expect(fresh).not.toBe(old)
      expect(regenerated.body.split(fresh).length - 1).toBe(1)
      const rotated = (await target.app.tokens.findById(record.id))!
      expect(rotated).toMatchObject({ id: record.id, name: record.name, scopes: record.scopes })
      expect(rotated.hash).toBe(hashTokenValue(fresh))
      expect(rotated.expiresAt! - rotated.rotatedAt!).toBe(30 * DAY_MS)
      expect(JSON.stringify(await target.app.tokens.listByOwner('alice'))).not.toContain(fresh.slice(4))

      expect((await api(target.server.port, old)).status).toBe(200)
      expect((await api(target.server.port, fresh)).status).toBe(200)
      target.advance(HOUR)
      try {
        expect(await api(target.server.port, old)).toEqual({ status: 401, code: 'invalid_token' })
        expect((await api(target.server.port, fresh)).status).toBe(200)
      } finally {
        target.advance(-HOUR)
      }
    })

    test('without overlap the old value stops at once; revoking ends both values at once', async () => {
      const target = open()
      const browser = await signedIn(target)
      const first = await createToken(target, browser, { lifetime: 'none' })
      const path = `/settings/tokens/${first.record.id}/regenerate`
      const post = async (overlap: string) => {
        const confirm = await browser.get(path)
        return browser.post(path, { csrf_token: csrfOf(confirm.body, path), overlap })
      }
      const none = await post('none')
      expect(none.body).toContain('The previous value no longer works.')
      const second = tokenValueOf(none.body)!
      expect(await api(target.server.port, first.value)).toEqual({ status: 401, code: 'invalid_token' })
      expect((await api(target.server.port, second)).status).toBe(200)

      expect((await post('forever')).status).toBe(400)
      const third = tokenValueOf((await post('7d')).body)!
      expect((await api(target.server.port, second)).status).toBe(200)
      expect((await api(target.server.port, third)).status).toBe(200)

      const revokePath = `/settings/tokens/${first.record.id}/revoke`
      const confirm = await browser.get(revokePath)
      expect(
        (await browser.post(revokePath, { csrf_token: csrfOf(confirm.body, revokePath), confirm: 'yes' }))
          .status,
      ).toBe(303)
      expect(await api(target.server.port, second)).toEqual({ status: 401, code: 'invalid_token' })
      expect(await api(target.server.port, third)).toEqual({ status: 401, code: 'invalid_token' })
      expect((await browser.get(path)).status).toBe(404)
    })
  })

  describe('leak reports', () => {
    const entry = (token: string) => ({
      token,
      type: 'data_access_policy_api_token',
      url: `https://github.com/octocat/leaky/blob/${framework}/.env`,
      source: 'content',
    })

    test('a valid report revokes the live tokens it names, records why, and answers per token', async () => {
      const target = capped()
      const browser = await signedIn(target)
      const leaked = await createToken(target, browser, { lifetime: '30' })
      const unknown = 'dap_0123456789ABCDEFGHIJKLMNOPQRSTUV2jCnw5'
      const body = JSON.stringify([entry(leaked.value), entry(unknown), entry('not-a-token')])
      const answer = await report(target, body, signed(body))
      expect(answer.status).toBe(200)
      expect(answer.body).toEqual([
        {
          token_hash: hashTokenValue(leaked.value),
          token_type: 'data_access_policy_api_token',
          label: 'true_positive',
        },
        {
          token_hash: hashTokenValue(unknown),
          token_type: 'data_access_policy_api_token',
          label: 'false_positive',
        },
        {
          token_hash: hashTokenValue('not-a-token'),
          token_type: 'data_access_policy_api_token',
          label: 'false_positive',
        },
      ])
      expect(JSON.stringify(answer.body)).not.toContain(leaked.value)
      expect(await api(target.server.port, leaked.value)).toEqual({ status: 401, code: 'invalid_token' })
      const reason = `found public at https://github.com/octocat/leaky/blob/${framework}/.env`
      expect((await target.app.tokens.findById(leaked.record.id))?.revokedReason).toBe(reason)
      const page = (await browser.get('/settings/tokens')).body
      expect(page).toContain(`revoked: ${reason}`)
      expect(page).toContain('Revoked because found in public')
    })

    test('a report naming both values of a regenerated token revokes the token once', async () => {
      const target = capped()
      const browser = await signedIn(target)
      const { value: old, record } = await createToken(target, browser, { lifetime: '30' })
      const path = `/settings/tokens/${record.id}/regenerate`
      const confirm = await browser.get(path)
      const fresh = tokenValueOf(
        (await browser.post(path, { csrf_token: csrfOf(confirm.body, path), overlap: '24h' })).body,
      )!
      const body = JSON.stringify([entry(old)])
      expect((await report(target, body, signed(body))).status).toBe(200)
      expect(await api(target.server.port, old)).toEqual({ status: 401, code: 'invalid_token' })
      expect(await api(target.server.port, fresh)).toEqual({ status: 401, code: 'invalid_token' })
    })

    test.each([
      ['signed by a key that is not configured', (body: string) => signed(body, stranger.privateKey)],
      ['signed under an unknown key id', (body: string) => signed(body, github.privateKey, 'other')],
      ['signed over another body', (body: string) => signed(body.replace('content', 'commit'))],
      ['unsigned', () => ({ 'content-type': 'application/json' })],
      [
        'with a garbled signature',
        (body: string) => ({ ...signed(body), 'github-public-key-signature': 'bm90IGEgc2lnbmF0dXJl' }),
      ],
    ])('a report %s is 401 and revokes nothing', async (_what, headers) => {
      const target = capped()
      const browser = await signedIn(target)
      const { value, record } = await createToken(target, browser, { lifetime: '30' })
      const body = JSON.stringify([entry(value)])
      const answer = await report(target, body, headers(body))
      expect(answer.status).toBe(401)
      expect(answer.body).toMatchObject({ error: { code: 'invalid_signature' } })
      expect((await api(target.server.port, value)).status).toBe(200)
      expect((await target.app.tokens.findById(record.id))?.revokedAt).toBeUndefined()
    })

    test.each([
      ['not JSON', (value: string) => `[{"token":"${value}"`],
      ['an object, not a list', (value: string) => JSON.stringify(entry(value))],
      ['an empty list', () => '[]'],
      [
        'an entry without a url',
        (value: string) => JSON.stringify([{ token: value, type: 't', source: 's' }]),
      ],
      ['a good entry beside a bad one', (value: string) => JSON.stringify([entry(value), { token: 5 }])],
    ])('a signed report that is %s is 400 and revokes nothing', async (_what, make) => {
      const target = capped()
      const browser = await signedIn(target)
      const { value } = await createToken(target, browser, { lifetime: '30' })
      const body = make(value)
      const answer = await report(target, body, signed(body))
      expect(answer.status).toBe(400)
      expect(answer.body).toMatchObject({ error: { code: 'malformed_report' } })
      expect((await api(target.server.port, value)).status).toBe(200)
    })

    test('a replayed report is 409 and changes nothing, even re-signed', async () => {
      const target = capped()
      const browser = await signedIn(target)
      const first = await createToken(target, browser, { lifetime: '30' })
      const body = JSON.stringify([entry(first.value)])
      expect((await report(target, body, signed(body))).status).toBe(200)
      const revoked = await target.app.tokens.findById(first.record.id)
      target.advance(HOUR)
      try {
        for (const headers of [signed(body), signed(body)]) {
          const again = await report(target, body, headers)
          expect(again.status).toBe(409)
          expect(again.body).toMatchObject({ error: { code: 'replayed_report' } })
        }
        expect(await target.app.tokens.findById(first.record.id)).toEqual(revoked)
      } finally {
        target.advance(-HOUR)
      }
    })

    test('an unknown token is a false positive and nothing is revoked', async () => {
      const target = capped()
      const browser = await signedIn(target)
      const { value } = await createToken(target, browser, { lifetime: '30' })
      // Well formed, checksum and all, but no token of this server.
      const stranger = generateTokenValue('api')
      const body = JSON.stringify([entry(stranger)])
      const answer = await report(target, body, signed(body))
      expect(answer.status).toBe(200)
      expect(answer.body).toEqual([
        {
          token_hash: hashTokenValue(stranger),
          token_type: 'data_access_policy_api_token',
          label: 'false_positive',
        },
      ])
      expect((await api(target.server.port, value)).status).toBe(200)
    })

    test('a signed report of 1000 entries of the longest a real report carries is read whole', async () => {
      const target = capped()
      const browser = await signedIn(target)
      const leaked = await createToken(target, browser, { lifetime: '30' })
      // GitHub's blob URL of a file deep in a long repository, 2,048 bytes; pretty-printed, as
      // GitHub's examples are.
      const blob = `https://github.com/${'o'.repeat(39)}/${'r'.repeat(100)}/blob/${'f'.repeat(40)}/`
      const url = blob + 'd/'.repeat((2048 - blob.length) / 2)
      const entries = Array.from({ length: 1000 }, (_, index) => ({
        token: index === 999 ? leaked.value : generateTokenValue('oauth'),
        type: 'data_access_policy_oauth_token',
        url,
        source: 'discussion_comment',
      }))
      const body = JSON.stringify(entries, null, 2)
      // Far past the 64 KiB every other route reads, within the leak endpoint's own cap.
      expect(Buffer.byteLength(body)).toBeGreaterThan(30 * MAX_BODY_BYTES)
      expect(Buffer.byteLength(body)).toBeLessThanOrEqual(MAX_LEAK_REPORT_BYTES)
      const answer = await report(target, body, signed(body))
      expect(answer.status).toBe(200)
      const feedback = answer.body as { label: string }[]
      expect(feedback).toHaveLength(1000)
      expect(feedback.filter(({ label }) => label === 'true_positive')).toHaveLength(1)
      expect(await api(target.server.port, leaked.value)).toEqual({ status: 401, code: 'invalid_token' })
    })

    test('a signed report over the leak endpoint’s cap is 413 and revokes nothing', async () => {
      const target = capped()
      const browser = await signedIn(target)
      const leaked = await createToken(target, browser, { lifetime: '30' })
      const valid = JSON.stringify([entry(leaked.value)])
      // Still JSON: whitespace after the array, one byte past the cap.
      const body = valid + ' '.repeat(MAX_LEAK_REPORT_BYTES + 1 - valid.length)
      const answer = await report(target, body, signed(body))
      expect(answer).toEqual({
        status: 413,
        body: {
          error: {
            status: 413,
            message: 'Payload too large',
            code: 'body_too_large',
            detail: `the body must be at most ${MAX_LEAK_REPORT_BYTES} bytes`,
          },
        },
      })
      expect((await api(target.server.port, leaked.value)).status).toBe(200)
    })

    test('the larger cap is the leak endpoint’s only: a page still reads 64 KiB', async () => {
      const target = capped()
      const browser = await signedIn(target)
      const list = await browser.get('/settings/tokens')
      const created = await browser.post('/settings/tokens', {
        csrf_token: csrfOf(list.body, '/settings/tokens'),
        name: 'x'.repeat(MAX_BODY_BYTES),
        scopes: ['public'],
      })
      expect(created.status).toBe(413)
      expect(created.body).toContain(`at most ${MAX_BODY_BYTES} bytes`)
    })

    test('a server without --secret-scanning-keys has no leak endpoint', async () => {
      const body = JSON.stringify([entry('x')])
      const response = await fetch(`${open().server.url}/secret-scanning/report`, {
        method: 'POST',
        headers: signed(body),
        body,
      })
      expect(response.status).toBe(404)
    })
  })
})

describe('body caps by route', () => {
  test.each([
    ['POST', LEAK_REPORT_PATH, MAX_LEAK_REPORT_BYTES],
    ['POST', `${LEAK_REPORT_PATH}?from=github`, MAX_LEAK_REPORT_BYTES],
    // Another spelling or method is not the leak endpoint's: the default, smaller cap.
    ['POST', `${LEAK_REPORT_PATH}/`, MAX_BODY_BYTES],
    ['POST', LEAK_REPORT_PATH.toUpperCase(), MAX_BODY_BYTES],
    ['GET', LEAK_REPORT_PATH, MAX_BODY_BYTES],
    ['POST', '/settings/tokens', MAX_BODY_BYTES],
    [undefined, undefined, MAX_BODY_BYTES],
  ])('%s %s reads up to %i bytes', (method, target, limit) => {
    expect(bodyLimits(running.express.capped.app.routeSets)(method, target)).toBe(limit)
  })

  test('a route with its own cap and :params is refused: bodies are read before routing', () => {
    const handle = () => Promise.reject(new Error('not called'))
    const routes = [{ method: 'POST' as const, path: '/a/:id', handle, maxBodyBytes: 1 }]
    expect(() => bodyLimits([{ name: 'x', routes }])).toThrow(
      'POST /a/:id: a route with its own body cap cannot have :params',
    )
  })
})
