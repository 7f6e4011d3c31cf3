/**
 * The device flow's pages over HTTP, on Express, Fastify and Hono: `GET /device` (the `user_code`
 * field, filled in from `verification_uri_complete`), code entry ignoring case and punctuation,
 * wrong codes counted and locked, sign-in, the consent page naming the client and the code, the
 * done page; CSRF on every form, `Cache-Control: no-store` on every page.
 */
import { describe, expect, test } from 'vitest'
import { FRAMEWORKS } from '../../examples/server/flags.js'
import { MAX_PENDING_CONSENTS_PER_GRANT } from '../../examples/server/oauth/pending-consents.js'
import { formWith, PageAgent, type PageResponse, signInThrough } from './oauth-agent.js'
import {
  ALICE_PASSWORD,
  BOB_PASSWORD,
  basic,
  CLI_SECRET,
  DEVICE_GRANT,
  pkcePair,
  postForm,
} from './oauth-fixtures.js'
import { useOAuthServers } from './oauth-harness.js'

const { clock, origin: originOf } = useOAuthServers()

// A user code with one letter changed to another of the alphabet: a wrong but well-formed code.
function wrongCode(code: string): string {
  const letters = code.replace('-', '')
  const swapped = letters[0] === 'B' ? `C${letters.slice(1)}` : `B${letters.slice(1)}`
  return `${swapped.slice(0, 4)}-${swapped.slice(4)}`
}

describe.each(FRAMEWORKS)('the device pages on %s', (framework) => {
  const origin = () => originOf(framework)

  async function startGrant(fields: Record<string, string> = {}, headers: Record<string, string> = {}) {
    const { verifier, challenge } = pkcePair()
    const started = await postForm(
      `${origin()}/oauth/device_authorization`,
      {
        scope: 'data.metadata wokflow.read',
        code_challenge: challenge,
        code_challenge_method: 'S256',
        ...fields,
      },
      headers,
    )
    expect(started.status).toBe(200)
    const body = started.body as Record<string, string>
    return {
      verifier,
      deviceCode: body.device_code!,
      userCode: body.user_code!,
      complete: body.verification_uri_complete!,
    }
  }

  const poll = (deviceCode: string, verifier: string, extra: Record<string, string> = {}, headers = {}) =>
    postForm(
      `${origin()}/oauth/token`,
      { grant_type: DEVICE_GRANT, device_code: deviceCode, code_verifier: verifier, ...extra },
      headers,
    )

  function expectPage(page: PageResponse, status = 200) {
    expect(page.status).toBe(status)
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8')
    expect(page.headers.get('cache-control')).toBe('no-store')
  }

  test('GET /device: a labelled user_code field in a form with a CSRF token', async () => {
    const page = await new PageAgent(origin()).get('/device')
    expectPage(page)
    const form = formWith(page.body, 'user_code')
    expect(form.method).toBe('post')
    expect(form.action).toBe('/device')
    expect(form.labels.user_code).toBe('Code from the device')
    expect(form.controls.some((control) => control.name === 'csrf_token' && control.value !== '')).toBe(true)
  })

  test('verification_uri_complete fills the code in (and still asks to confirm it)', async () => {
    const { complete, userCode } = await startGrant()
    const page = await new PageAgent(origin()).get(complete)
    expectPage(page)
    const field = formWith(page.body, 'user_code').controls.find((control) => control.name === 'user_code')!
    expect(field.value).toBe(userCode)
  })

  test('the whole flow signed out: code, sign-in, consent naming client and code, done; then the token', async () => {
    const { verifier, deviceCode, userCode } = await startGrant(
      { client_id: 'cli' },
      { authorization: basic('cli', CLI_SECRET) },
    )
    const agent = new PageAgent(origin())
    const entry = await agent.get('/device')
    // Lower case, spaces instead of the dash: the same code.
    const typed = userCode.toLowerCase().replace('-', ' ')
    const signIn = await agent.submit(formWith(entry.body, 'user_code'), { user_code: ` ${typed} ` })
    expectPage(signIn)
    const consent = await signInThrough(agent, signIn, 'alice', ALICE_PASSWORD)
    expectPage(consent)
    expect(consent.body).toContain(
      'Application: <strong><bdi>cli</bdi></strong> (a client registered with this server)',
    )
    expect(consent.body).toContain(`<code>${userCode}</code>`)
    expect(consent.body).toContain('<code>data.metadata</code>')
    expect(consent.body).toContain('Read access to workflows and the contents of their nodes.')
    expect(consent.body).toContain('a refresh token')
    const done = await agent.submit(formWith(consent.body, 'decision'), {}, { button: 'approve' })
    expectPage(done)
    expect(done.body).toContain('Device connected')
    const token = await poll(deviceCode, verifier, {}, { authorization: basic('cli', CLI_SECRET) })
    expect(token.status).toBe(200)
    expect(token.body.scope).toBe('public data.metadata wokflow.read')
    expect(typeof token.body.refresh_token).toBe('string')
  })

  test('a grant’s code entered in more browsers than its bound: the rest get a clear 429, the first go on', async () => {
    const { userCode } = await startGrant()
    const enter = async (agent: PageAgent) =>
      agent.submit(formWith((await agent.get('/device')).body, 'user_code'), { user_code: userCode })
    const first = new PageAgent(origin())
    const signIn = await enter(first)
    expectPage(signIn)
    for (let i = 1; i < MAX_PENDING_CONSENTS_PER_GRANT; i++) expectPage(await enter(new PageAgent(origin())))
    for (let i = 0; i < 3; i++) {
      const refused = await enter(new PageAgent(origin()))
      expectPage(refused, 429)
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0)
      expect(refused.body).toContain(
        `This code was already entered in ${MAX_PENDING_CONSENTS_PER_GRANT} other browsers, which are waiting for an answer.`,
      )
    }
    // The page the first browser opened was not pushed out.
    const consent = await signInThrough(first, signIn, 'alice', ALICE_PASSWORD)
    expectPage(consent)
    expect(consent.body).toContain(`<code>${userCode}</code>`)
  })

  test('signed in already: the consent page straight after the code; a session client is named as such', async () => {
    const { verifier, deviceCode, userCode } = await startGrant()
    const agent = new PageAgent(origin())
    const signIn = await agent.get('/signin')
    await signInThrough(agent, signIn, 'bob', BOB_PASSWORD)
    const entry = await agent.get('/device')
    const consent = await agent.submit(formWith(entry.body, 'user_code'), { user_code: userCode })
    expectPage(consent)
    expect(consent.body).toContain('an application on your device (no client id)')
    expect(consent.body).toContain('Signed in as <strong>bob</strong>')
    const done = await agent.submit(formWith(consent.body, 'decision'), {}, { button: 'deny' })
    expect(done.body).toContain('Access denied')
    expect((await poll(deviceCode, verifier)).body.error).toBe('access_denied')
  })

  test('five wrong codes lock the browser, even for the right code', async () => {
    const { userCode } = await startGrant()
    const agent = new PageAgent(origin())
    let page = await agent.get('/device')
    for (let attempt = 1; attempt <= 4; attempt++) {
      page = await agent.submit(formWith(page.body, 'user_code'), { user_code: wrongCode(userCode) })
      expectPage(page, 400)
      expect(page.body).toContain(`(${5 - attempt} ${5 - attempt === 1 ? 'try' : 'tries'} left)`)
    }
    page = await agent.submit(formWith(page.body, 'user_code'), { user_code: wrongCode(userCode) })
    expectPage(page, 429)
    page = await agent.submit(formWith(page.body, 'user_code'), { user_code: userCode })
    expectPage(page, 429)
    expect(page.body).toContain('Too many wrong codes')
    // Another browser is not locked.
    const other = new PageAgent(origin())
    const entry = await other.get('/device')
    const next = await other.submit(formWith(entry.body, 'user_code'), { user_code: userCode })
    expectPage(next)
    expect(next.body).toContain('name="password"')
  })

  test('a malformed code counts as a wrong one', async () => {
    const agent = new PageAgent(origin())
    const entry = await agent.get('/device')
    const page = await agent.submit(formWith(entry.body, 'user_code'), { user_code: 'AEIO-1234' })
    expectPage(page, 400)
    expect(page.body).toContain('4 tries left')
  })

  test('an expired code is refused', async () => {
    const { userCode } = await startGrant()
    clock.advance(600_000)
    const agent = new PageAgent(origin())
    const entry = await agent.get('/device')
    const page = await agent.submit(formWith(entry.body, 'user_code'), { user_code: userCode })
    expectPage(page, 400)
    expect(page.body).toContain('This code has expired')
  })

  test('a code already decided is refused', async () => {
    const { userCode } = await startGrant()
    const agent = new PageAgent(origin())
    const signIn = await agent.get('/signin')
    await signInThrough(agent, signIn, 'alice', ALICE_PASSWORD)
    const entry = await agent.get('/device')
    const consent = await agent.submit(formWith(entry.body, 'user_code'), { user_code: userCode })
    await agent.submit(formWith(consent.body, 'decision'), {}, { button: 'approve' })
    const again = await agent.submit(formWith((await agent.get('/device')).body, 'user_code'), {
      user_code: userCode,
    })
    expectPage(again, 400)
    expect(again.body).toContain('already been used')
  })

  test('the code form without its CSRF token: 403, and nothing counted', async () => {
    const { userCode } = await startGrant()
    const agent = new PageAgent(origin())
    await agent.get('/device')
    const forged = await agent.post('/device', new URLSearchParams({ user_code: userCode }))
    expectPage(forged, 403)
    expect(forged.body).not.toContain('name="password"')
  })

  test('two consent pages for one code: the second answer finds the grant decided', async () => {
    const { userCode } = await startGrant()
    const agent = new PageAgent(origin())
    const signIn = await agent.get('/signin')
    await signInThrough(agent, signIn, 'alice', ALICE_PASSWORD)
    const first = await agent.submit(formWith((await agent.get('/device')).body, 'user_code'), {
      user_code: userCode,
    })
    const second = await agent.submit(formWith((await agent.get('/device')).body, 'user_code'), {
      user_code: userCode,
    })
    expect((await agent.submit(formWith(first.body, 'decision'), {}, { button: 'approve' })).status).toBe(200)
    const late = await agent.submit(formWith(second.body, 'decision'), {}, { button: 'deny' })
    expectPage(late, 400)
    expect(late.body).toContain('already been approved or denied')
  })

  test('a resumed consent belongs to the session that signs in first', async () => {
    const { userCode } = await startGrant()
    const agent = new PageAgent(origin())
    const entry = await agent.get('/device')
    const signIn = await agent.submit(formWith(entry.body, 'user_code'), { user_code: userCode })
    const next = formWith(signIn.body, 'password').controls.find((control) => control.name === 'next')!.value
    expect(next).toMatch(/^\/device\?consent=[A-Za-z0-9_-]{43}$/)
    await signInThrough(agent, signIn, 'alice', ALICE_PASSWORD)
    // Someone else who learns the address gets nothing from it.
    const other = new PageAgent(origin())
    const otherSignIn = await other.get('/signin')
    await signInThrough(other, otherSignIn, 'bob', BOB_PASSWORD)
    const page = await other.get(next)
    expectPage(page, 400)
    expect(page.body).not.toContain('name="decision"')
  })
})
