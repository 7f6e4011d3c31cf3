/**
 * Workspace settings for API tokens over real HTTP on Express, Fastify and Hono (design §9,
 * issue 8): the lifecycle — create (the value once), use on the API, rescope, rename, revoke —
 * with the API reading the store on the very next request; CSRF; other users' ids; validation;
 * and where a token value may appear: in the one-time answer page, and nowhere else (pages,
 * headers, the session store, the server's stdout and stderr).
 */

import { format } from 'node:util'
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest'
import { FRAMEWORKS, type Framework } from '../../examples/server/flags.js'
import { DEMO_SEED } from '../../examples/server/seed/demo.js'
import { loadSeed } from '../../examples/server/seed/load.js'
import { type StartedServer, startServer } from '../../examples/server/server.js'
import type { MemorySessionStore } from '../../examples/server/web/sessions.js'
import { isWellFormedTokenValue, type TokenRecord } from '../../src/index.js'
import { createOAuthToken } from '../../src/oauth/index.js'
import { csrfOf, formOf, signIn, tokenValueOf, WebClient, type WebResponse } from './web-client.js'

const servers = {} as Record<Framework, StartedServer>
let offset = 0
const now = () => Date.now() + offset

// Everything the servers print while this file runs, to look for token values in.
let logged = ''
const capture = (write: typeof process.stdout.write) =>
  function (this: unknown, chunk: unknown, ...rest: unknown[]) {
    logged += typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString('utf8')
    return (write as (...args: unknown[]) => boolean).call(this, chunk, ...rest)
  } as typeof process.stdout.write

beforeAll(async () => {
  vi.spyOn(process.stdout, 'write').mockImplementation(capture(process.stdout.write))
  vi.spyOn(process.stderr, 'write').mockImplementation(capture(process.stderr.write))
  // The test runner may route `console` around the streams: record it too.
  for (const method of ['log', 'info', 'warn', 'error', 'debug'] as const) {
    vi.spyOn(console, method).mockImplementation((...args: unknown[]) => {
      logged += `${format(...args)}\n`
    })
  }
  const seed = await loadSeed(DEMO_SEED)
  await Promise.all(
    FRAMEWORKS.map(async (framework) => {
      servers[framework] = await startServer({ seed, framework, port: 0, now })
    }),
  )
})

afterAll(async () => {
  await Promise.all(Object.values(servers).map((server) => server.close()))
  vi.restoreAllMocks()
})

/** A browser that keeps every answer it got, to check them all afterwards. */
class RecordingClient extends WebClient {
  readonly answers: { readonly method: string; readonly path: string; readonly response: WebResponse }[] = []

  override async send(method: string, path: string, body: string | undefined, options = {}) {
    const response = await super.send(method, path, body, options)
    this.answers.push({ method, path, response })
    return response
  }
}

async function api(port: number, value: string, path: string) {
  const response = await fetch(`http://127.0.0.1:${port}${path}`, {
    headers: { authorization: `Bearer ${value}` },
  })
  return { status: response.status, body: (await response.json()) as { error?: { code?: string } } }
}

describe.each(FRAMEWORKS)('%s', (framework) => {
  const port = () => servers[framework].port
  const app = () => servers[framework].app
  const signedIn = async (handle = 'alice') => {
    const browser = new RecordingClient(port())
    const answer = await signIn(browser, handle, `${handle}-demo-password`)
    expect(answer.status).toBe(303)
    return browser
  }
  const listed = async (handle: string): Promise<readonly TokenRecord[]> =>
    (await app().tokens.listByOwner(handle)).filter((token) => token.revokedAt === undefined)

  test('the lifecycle: create (the value once), use, rescope, rename, revoke', async () => {
    const browser = await signedIn()
    const list = await browser.get('/settings/tokens')
    expect(list.status).toBe(200)
    // The seeded tokens, by name and hint; never a value.
    expect(list.body).toContain('<th scope="row">admin</th>')
    expect(list.body).toContain('<code class="nowrap">dap_…VPIp</code>')
    expect(list.body).not.toMatch(/dap_[0-9A-Za-z]{38}/)

    // Create.
    const created = await browser.post('/settings/tokens', {
      csrf_token: csrfOf(list.body, '/settings/tokens'),
      name: '  nightly export  ',
      scopes: ['public', 'data.metadata'],
      expiresAt: '',
    })
    expect(created.status).toBe(200)
    expect(created.headers['cache-control']).toBe('no-store')
    const value = tokenValueOf(created.body)!
    expect(isWellFormedTokenValue(value)).toBe(true)
    expect(value.startsWith('dap_')).toBe(true)
    expect(created.body.split(value).length - 1).toBe(1)
    expect(created.body).toContain('will not be shown again')
    expect(created.body).toContain('Do not commit it to source control')
    expect(created.body).toMatch(/<button type="button" id="copy-token">Copy<\/button>/)
    expect(created.body).toMatch(/<label for="token-value">/)
    const [record] = (await listed('alice')).filter((token) => token.name === 'nightly export')
    expect(record).toMatchObject({ kind: 'api', scopes: ['public', 'data.metadata'] })
    expect(record!.expiresAt).toBeUndefined()

    // Reloading the list never shows it again.
    const again = await browser.get('/settings/tokens')
    expect(again.body).toContain('<th scope="row">nightly export</th>')
    expect(again.body).toContain(`<code class="nowrap">${record!.hint}</code>`)
    expect(again.body).not.toContain(value)

    // Use it: metadata of a dataset alice administers.
    expect((await api(port(), value, '/api/v1/datasets/acme/claims/metadata')).status).toBe(200)
    await vi.waitFor(async () => expect((await app().tokens.findById(record!.id))?.lastUsedAt).toBeDefined())
    expect(
      (await browser.get('/settings/tokens')).body
        .split('<tr>')
        .find((row) => row.includes('nightly export')),
    ).toMatch(
      /<time [^>]+>[^<]+<\/time><br><span class="hint">from <code>127\.0\.0\.1<\/code><\/span><\/td>\s*<td data-label="Expires">Never<\/td>/,
    )

    // Rescope to overview: the very next metadata request falls short.
    const edit = await browser.get(`/settings/tokens/${record!.id}`)
    expect(edit.status).toBe(200)
    expect(edit.body).toMatch(/name="scopes" value="data\.metadata" checked/)
    const rescoped = await browser.post(`/settings/tokens/${record!.id}`, {
      csrf_token: csrfOf(edit.body, `/settings/tokens/${record!.id}`),
      name: 'nightly export',
      scopes: ['public', 'data.overview'],
    })
    expect(rescoped.status).toBe(303)
    expect(rescoped.headers.location).toBe('/settings/tokens')
    const denied = await api(port(), value, '/api/v1/datasets/acme/claims/metadata')
    expect(denied.status).toBe(403)
    expect(denied.body.error?.code).toBe('insufficient_scope')
    expect((await api(port(), value, '/api/v1/datasets/acme/claims')).status).toBe(200)
    const notice = await browser.get('/settings/tokens')
    expect(notice.body).toContain('Saved “nightly export”')
    // A notice is shown once.
    expect((await browser.get('/settings/tokens')).body).not.toContain('Saved “nightly export”')

    // Rename; the scopes stay as they are when the form leaves them out.
    const renamed = await browser.post(`/settings/tokens/${record!.id}`, {
      csrf_token: csrfOf(edit.body, `/settings/tokens/${record!.id}`),
      name: 'weekly export',
    })
    expect(renamed.status).toBe(303)
    expect(await app().tokens.findById(record!.id)).toMatchObject({
      name: 'weekly export',
      scopes: ['public', 'data.overview'],
    })
    expect((await browser.get('/settings/tokens')).body).toContain('<th scope="row">weekly export</th>')

    // Revoke: the confirmation, then confirm=yes.
    const confirmation = await browser.get(`/settings/tokens/${record!.id}/revoke`)
    expect(confirmation.status).toBe(200)
    expect(confirmation.body).toContain('Revoke “weekly export”?')
    const confirmForm = formOf(confirmation.body, `/settings/tokens/${record!.id}/revoke`)
    expect(confirmForm).toContain('name="confirm" value="yes"')
    // A post without `confirm` (the list's Revoke button) only asks.
    const asked = await browser.post(`/settings/tokens/${record!.id}/revoke`, {
      csrf_token: csrfOf(confirmForm),
    })
    expect(asked.status).toBe(200)
    expect(asked.body).toContain('Revoke “weekly export”?')
    expect((await api(port(), value, '/api/v1/datasets/acme/claims')).status).toBe(200)
    const revoked = await browser.post(`/settings/tokens/${record!.id}/revoke`, {
      csrf_token: csrfOf(confirmForm),
      confirm: 'yes',
    })
    expect(revoked.status).toBe(303)
    expect(revoked.headers.location).toBe('/settings/tokens')
    const refused = await api(port(), value, '/api/v1/datasets/acme/claims')
    expect(refused.status).toBe(401)
    expect(refused.body.error?.code).toBe('invalid_token')
    const after = await browser.get('/settings/tokens')
    expect(after.body).toContain('Revoked “weekly export”')
    expect(after.body).not.toContain('<th scope="row">weekly export</th>')
    expect((await browser.get(`/settings/tokens/${record!.id}`)).status).toBe(404)

    // Where the value went: one answer, nothing else.
    const carrying = browser.answers.filter(
      (answer) =>
        answer.response.body.includes(value) || JSON.stringify(answer.response.headers).includes(value),
    )
    expect(carrying.map((answer) => `${answer.method} ${answer.path}`)).toEqual(['POST /settings/tokens'])
    for (const answer of browser.answers) {
      expect(answer.response.headers['cache-control'], `${answer.method} ${answer.path}`).toBe('no-store')
    }
    const sessions = app().web.sessions as MemorySessionStore
    expect(JSON.stringify(sessions.snapshot())).not.toContain(value)
    expect(JSON.stringify(sessions.snapshot())).not.toContain(value.slice(4))
    expect(logged).not.toContain(value.slice(4))
    // The capture works: what the server would print does reach it.
    console.error('capture check')
    expect(logged).toContain('capture check')
  })

  test('an expiry: the token works until then, is listed as expired after', async () => {
    const browser = await signedIn()
    const list = await browser.get('/settings/tokens')
    const inTwoDays = new Date(now() + 2 * 86_400_000).toISOString().slice(0, 10)
    const created = await browser.post('/settings/tokens', {
      csrf_token: csrfOf(list.body),
      name: 'short-lived',
      scopes: 'data.overview',
      expiresAt: inTwoDays,
    })
    expect(created.status).toBe(200)
    const value = tokenValueOf(created.body)!
    expect(created.body).toContain(`${inTwoDays} 00:00 UTC`)
    expect((await api(port(), value, '/api/v1/datasets/acme/claims')).status).toBe(200)
    offset += 3 * 86_400_000
    const refused = await api(port(), value, '/api/v1/datasets/acme/claims')
    expect(refused.status).toBe(401)
    expect(refused.body.error?.code).toBe('invalid_token')
    const relisted = await (await signedIn()).get('/settings/tokens')
    expect(relisted.body.split('<tr>').find((row) => row.includes('short-lived'))).toContain(
      '<strong>Expired</strong>',
    )
  })

  test('an ISO date and time with a zone is an expiry too; a scope string is read like the boxes', async () => {
    const browser = await signedIn('bob')
    const list = await browser.get('/settings/tokens')
    const at = new Date(now() + 86_400_000)
    at.setUTCMilliseconds(0)
    const created = await browser.post('/settings/tokens', {
      csrf_token: csrfOf(list.body),
      name: 'zoned',
      // A scope string reads like the checkboxes.
      scopes: 'wokflow.read data.overview',
      expiresAt: at.toISOString().replace('.000Z', 'Z'),
    })
    expect(created.status).toBe(200)
    const [record] = (await listed('bob')).filter((token) => token.name === 'zoned')
    expect(record).toMatchObject({
      expiresAt: at.getTime(),
      scopes: ['public', 'data.overview', 'wokflow.read'],
    })
  })

  test.each([
    ['an empty name', { name: '   ' }, 'Name: enter a name'],
    ['a name over 100 characters', { name: 'x'.repeat(101) }, 'Name: use at most 100 characters'],
    ['a name with control characters', { name: 'a\u0007b' }, 'Name: remove the control characters'],
    ['a name already in use', { name: 'admin' }, 'Name: you already have a token with this name'],
    [
      'an unknown scope',
      { name: 'n1', scopes: ['workflow.read'] },
      'Scopes: choose only from the scopes listed',
    ],
    ['an expiry in the past', { name: 'n2', expiresAt: '2020-01-01' }, 'Expiry: choose a date in the future'],
    ['an expiry that is no date', { name: 'n3', expiresAt: '2031-02-30' }, 'Expiry: enter a date such as'],
    ['an expiry in words', { name: 'n4', expiresAt: 'tomorrow' }, 'Expiry: enter a date such as'],
  ])(
    'create with %s: 400, the form again with a message naming the field',
    async (_name, fields, message) => {
      const browser = await signedIn()
      const before = (await listed('alice')).length
      const list = await browser.get('/settings/tokens')
      const answer = await browser.post('/settings/tokens', { csrf_token: csrfOf(list.body), ...fields })
      expect(answer.status).toBe(400)
      expect(answer.headers['cache-control']).toBe('no-store')
      expect(answer.body).toContain(message)
      expect(answer.body).toContain('<div class="error" role="alert" id="form-errors">')
      expect(tokenValueOf(answer.body)).toBeUndefined()
      expect((await listed('alice')).length).toBe(before)
    },
  )

  test('rename to a name in use, or to nothing: 400 on the edit page, nothing changes', async () => {
    const browser = await signedIn()
    const [reader] = (await listed('alice')).filter((token) => token.name === 'reader')
    const edit = await browser.get(`/settings/tokens/${reader!.id}`)
    for (const [name, message] of [
      ['admin', 'Name: you already have a token with this name'],
      ['', 'Name: enter a name'],
    ] as const) {
      const answer = await browser.post(`/settings/tokens/${reader!.id}`, {
        csrf_token: csrfOf(edit.body),
        name,
        scopes: ['public', 'data.data'],
      })
      expect(answer.status).toBe(400)
      expect(answer.body).toContain(message)
    }
    expect(await app().tokens.findById(reader!.id)).toMatchObject({
      name: 'reader',
      scopes: ['public', 'data.metadata'],
    })
  })

  test('public stays: unticking every scope leaves public only; public is shown checked and disabled', async () => {
    const browser = await signedIn('carol')
    const list = await browser.get('/settings/tokens')
    expect(list.body).toMatch(
      /<input type="checkbox" id="new-scope-public" name="scopes" value="public" checked disabled/,
    )
    const created = await browser.post('/settings/tokens', {
      csrf_token: csrfOf(list.body),
      name: 'wide',
      scopes: ['data.edit', 'organization.write'],
    })
    expect(created.status).toBe(200)
    const [record] = (await listed('carol')).filter((token) => token.name === 'wide')
    expect(record!.scopes).toEqual(['public', 'data.edit', 'organization.write'])
    const edit = await browser.get(`/settings/tokens/${record!.id}`)
    // What the edit form sends with every box unticked: the hidden `public` alone.
    await browser.post(`/settings/tokens/${record!.id}`, {
      csrf_token: csrfOf(edit.body),
      name: 'wide',
      scopes: 'public',
    })
    expect((await app().tokens.findById(record!.id))!.scopes).toEqual(['public'])
  })

  test('every scope is offered with the contract’s words', async () => {
    const list = await (await signedIn()).get('/settings/tokens')
    for (const scope of ['data.overview', 'wokflow.read', 'organization.write']) {
      expect(list.body).toContain(`value="${scope}"`)
    }
    expect(list.body).toContain('Reveals the dataset&#39;s existence and some documentation.')
    expect(list.body).toContain('Read access to workflows and the contents of their nodes.')
  })

  describe('CSRF: a missing, wrong or foreign token is 403 and changes nothing', () => {
    const cases = [
      ['missing', () => ({})],
      ['wrong', (token: string) => ({ csrf_token: `${token.slice(0, -2)}xx` })],
      ['empty', () => ({ csrf_token: '' })],
    ] as const

    test.each(cases)('%s', async (_name, csrf) => {
      const browser = await signedIn()
      const list = await browser.get('/settings/tokens')
      const token = csrfOf(list.body)
      const [reader] = (await listed('alice')).filter((each) => each.name === 'reader')
      const before = await listed('alice')
      const attempts = [
        browser.post('/settings/tokens', { ...csrf(token), name: 'forged', scopes: 'data.edit' }),
        browser.post(`/settings/tokens/${reader!.id}`, {
          ...csrf(token),
          name: 'forged',
          scopes: 'data.edit',
        }),
        browser.post(`/settings/tokens/${reader!.id}/revoke`, { ...csrf(token), confirm: 'yes' }),
        browser.post(`/settings/tokens/${reader!.id}/revoke`, { ...csrf(token) }),
        browser.post('/signout', { ...csrf(token) }),
      ]
      for (const answer of await Promise.all(attempts)) {
        expect(answer.status).toBe(403)
        expect(answer.headers['cache-control']).toBe('no-store')
        expect(answer.headers['content-type']).toBe('text/html; charset=utf-8')
      }
      expect(await listed('alice')).toEqual(before)
    })

    test('another session’s token', async () => {
      const bob = await signedIn('bob')
      const bobsToken = csrfOf((await bob.get('/settings/tokens')).body)
      const alice = await signedIn()
      const answer = await alice.post('/settings/tokens', { csrf_token: bobsToken, name: 'forged' })
      expect(answer.status).toBe(403)
      expect((await listed('alice')).some((token) => token.name === 'forged')).toBe(false)
    })

    test('a form that is not form-encoded', async () => {
      const browser = await signedIn()
      const token = csrfOf((await browser.get('/settings/tokens')).body)
      const answer = await browser.send(
        'POST',
        '/settings/tokens',
        JSON.stringify({ csrf_token: token, name: 'json' }),
        {
          headers: { 'content-type': 'application/json' },
        },
      )
      expect(answer.status).toBe(403)
    })
  })

  test('another user’s token id, an unknown id, an OAuth token and a revoked token are all 404', async () => {
    const bob = await signedIn('bob')
    const token = csrfOf((await bob.get('/settings/tokens')).body)
    const [alices] = (await listed('alice')).filter((each) => each.name === 'admin')
    const oauth = createOAuthToken({ userId: 'bob', scopes: ['data.data'], clientId: 'demo-cli', now: now() })
    await app().tokens.save(oauth.record)
    const [old] = (await app().tokens.listByOwner('bob')).filter((each) => each.name === 'old')
    expect(old!.revokedAt).toBeDefined()
    for (const id of [alices!.id, 'tok_doesNotExist000', oauth.record.id, old!.id]) {
      const answers = [
        await bob.get(`/settings/tokens/${id}`),
        await bob.get(`/settings/tokens/${id}/revoke`),
        await bob.post(`/settings/tokens/${id}`, {
          csrf_token: token,
          name: 'mine now',
          scopes: 'data.edit',
        }),
        await bob.post(`/settings/tokens/${id}/revoke`, { csrf_token: token, confirm: 'yes' }),
      ]
      for (const answer of answers) {
        expect(answer.status, id).toBe(404)
        expect(answer.headers['cache-control']).toBe('no-store')
        expect(answer.body).not.toContain('mine now')
      }
    }
    expect(await app().tokens.findById(alices!.id)).toEqual(alices)
    // OAuth tokens are not listed among API tokens.
    expect((await bob.get('/settings/tokens')).body).not.toContain('OAuth session')
  })

  test('signed out, every settings route sends to sign-in and changes nothing', async () => {
    const stranger = new WebClient(port())
    const [reader] = (await listed('alice')).filter((each) => each.name === 'reader')
    for (const [method, path] of [
      ['GET', '/settings/tokens'],
      ['GET', `/settings/tokens/${reader!.id}`],
      ['GET', `/settings/tokens/${reader!.id}/revoke`],
      ['POST', '/settings/tokens'],
      ['POST', `/settings/tokens/${reader!.id}`],
      ['POST', `/settings/tokens/${reader!.id}/revoke`],
    ] as const) {
      const answer =
        method === 'GET' ? await stranger.get(path) : await stranger.post(path, { name: 'x', confirm: 'yes' })
      expect(answer.status).toBe(303)
      expect(answer.headers.location).toBe(`/signin?next=${method === 'GET' ? path : '/settings/tokens'}`)
    }
    expect((await app().tokens.findById(reader!.id))!.revokedAt).toBeUndefined()
  })
})

describe('the same pages on every framework', () => {
  test('list, create answer, 400, 403 and 404: identical status and headers', async () => {
    const shapes = await Promise.all(
      FRAMEWORKS.map(async (framework) => {
        const browser = new WebClient(servers[framework].port)
        await signIn(browser, 'bob', 'bob-demo-password')
        const list = await browser.get('/settings/tokens')
        const answers = [
          list,
          await browser.post('/settings/tokens', {
            csrf_token: csrfOf(list.body),
            name: `same-${framework}`,
          }),
          await browser.post('/settings/tokens', { csrf_token: csrfOf(list.body), name: '' }),
          await browser.post('/settings/tokens', { name: 'no csrf' }),
          await browser.get('/settings/tokens/tok_unknown'),
        ]
        return answers.map(({ status, headers }) => {
          const { date: _date, 'content-length': _length, ...rest } = headers
          return { status, headers: rest }
        })
      }),
    )
    expect(shapes[1]).toEqual(shapes[0])
    expect(shapes[2]).toEqual(shapes[0])
  })
})
