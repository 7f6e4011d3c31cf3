/**
 * `GET /oauth/authorize` and the consent answer over HTTP, on Express, Fastify and Hono: request
 * errors answered before any sign-in (a 400 page, or a redirect with `error` and `state`), the
 * sign-in form, the consent page, approve and deny, the consent form's protections, and the PKCE
 * outcomes of redeeming the code (design §7).
 */
import { describe, expect, test } from 'vitest'
import { FRAMEWORKS } from '../../examples/server/flags.js'
import { formWith, PageAgent, parseForms } from './oauth-agent.js'
import {
  ALICE_PASSWORD,
  authorizeThroughPages,
  authorizeUrl,
  BOB_PASSWORD,
  basic,
  CLI_REDIRECT,
  CLI_SECRET,
  callApi,
  pkcePair,
  postForm,
  RFC_CHALLENGE,
  RFC_VERIFIER,
  WEB_REDIRECT,
} from './oauth-fixtures.js'
import { useOAuthServers } from './oauth-harness.js'

const { clock, origin: originOf } = useOAuthServers()

const VALID = {
  response_type: 'code',
  client_id: 'cli',
  redirect_uri: CLI_REDIRECT,
  scope: 'data.overview',
  state: 'st-123',
  code_challenge: RFC_CHALLENGE,
  code_challenge_method: 'S256',
} as const

type Params = Record<string, string | undefined>

/** Errors shown as a 400 page: the client or redirect URI cannot be trusted with a redirect. */
const PAGE_ERRORS: readonly [string, string, Params][] = [
  ['an unknown client', 'invalid_client', { ...VALID, client_id: 'nobody' }],
  ['no redirect URI', 'invalid_request', { ...VALID, redirect_uri: undefined }],
  [
    'an unregistered redirect URI',
    'invalid_request',
    { ...VALID, redirect_uri: 'http://127.0.0.1:8765/other' },
  ],
  [
    'a redirect URI on another host',
    'invalid_request',
    { ...VALID, redirect_uri: 'https://evil.example/cb' },
  ],
  ['a redirect URI with a fragment', 'invalid_request', { ...VALID, redirect_uri: `${CLI_REDIRECT}#x` }],
  [
    'a session client (no client_id) with a non-loopback redirect URI',
    'invalid_request',
    { ...VALID, client_id: undefined, redirect_uri: 'https://app.example/cb' },
  ],
  [
    'localhost, which is not a loopback literal',
    'invalid_request',
    { ...VALID, client_id: undefined, redirect_uri: 'http://localhost:8765/cb' },
  ],
]

/** Errors redirected to the verified redirect URI with `error` and `state`. */
const REDIRECT_ERRORS: readonly [string, string, Params][] = [
  ['no response_type', 'invalid_request', { ...VALID, response_type: undefined }],
  ['response_type=token', 'unsupported_response_type', { ...VALID, response_type: 'token' }],
  ['no code_challenge', 'invalid_request', { ...VALID, code_challenge: undefined }],
  ['no code_challenge_method', 'invalid_request', { ...VALID, code_challenge_method: undefined }],
  ['code_challenge_method=plain', 'invalid_request', { ...VALID, code_challenge_method: 'plain' }],
  ['code_challenge_method=s256 (lower case)', 'invalid_request', { ...VALID, code_challenge_method: 's256' }],
  ['a malformed code_challenge', 'invalid_request', { ...VALID, code_challenge: 'too-short' }],
  ['an unknown scope', 'invalid_scope', { ...VALID, scope: 'workflow.read' }],
  ['a scope with a bad separator', 'invalid_scope', { ...VALID, scope: 'data.data,public' }],
]

describe.each(FRAMEWORKS)('GET /oauth/authorize on %s', (framework) => {
  const origin = () => originOf(framework)

  test.each(PAGE_ERRORS)('%s: a 400 page naming %s, before any sign-in', async (_title, code, params) => {
    const agent = new PageAgent(origin())
    const page = await agent.get(authorizeUrl(origin(), params))
    expect(page.status).toBe(400)
    expect(page.location).toBeUndefined()
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8')
    expect(page.headers.get('cache-control')).toBe('no-store')
    expect(page.body).toContain(`<code id="oauth-error">${code}</code>`)
    expect(page.body).not.toContain('name="password"')
  })

  test('a repeated client_id is a 400 page too', async () => {
    const url = `${authorizeUrl(origin(), VALID)}&client_id=web`
    const page = await new PageAgent(origin()).get(url)
    expect(page.status).toBe(400)
    expect(page.body).toContain('<code id="oauth-error">invalid_request</code>')
  })

  test.each(REDIRECT_ERRORS)('%s: redirected with error=%s and the state', async (_title, code, params) => {
    const page = await new PageAgent(origin()).get(authorizeUrl(origin(), params))
    expect(page.status).toBe(302)
    expect(page.headers.get('cache-control')).toBe('no-store')
    const location = new URL(page.location!)
    expect(`${location.origin}${location.pathname}`).toBe(CLI_REDIRECT)
    expect(location.searchParams.get('error')).toBe(code)
    expect(location.searchParams.get('state')).toBe('st-123')
    expect(location.searchParams.has('code')).toBe(false)
  })

  test("an error keeps the redirect URI's own query, and an absent state stays absent", async () => {
    const page = await new PageAgent(origin()).get(
      authorizeUrl(origin(), {
        ...VALID,
        client_id: 'web',
        redirect_uri: WEB_REDIRECT,
        state: undefined,
        code_challenge_method: 'plain',
      }),
    )
    expect(page.status).toBe(302)
    const location = new URL(page.location!)
    expect(location.searchParams.get('tenant')).toBe('7')
    expect(location.searchParams.get('error')).toBe('invalid_request')
    expect(location.searchParams.has('state')).toBe(false)
  })

  test('a valid request, signed out: the sign-in form, continuing to the same request', async () => {
    const url = authorizeUrl(origin(), VALID)
    const page = await new PageAgent(origin()).get(url)
    expect(page.status).toBe(200)
    expect(page.headers.get('cache-control')).toBe('no-store')
    const form = formWith(page.body, 'password')
    expect(form.action).toBe('/signin')
    expect(form.method).toBe('post')
    const names = form.controls.map((control) => control.name)
    expect(names).toEqual(expect.arrayContaining(['handle', 'password', 'next', 'csrf_token']))
    expect(form.labels.handle).toBe('Handle')
    expect(form.labels.password).toBe('Password')
    const next = form.controls.find((control) => control.name === 'next')!.value
    expect(`${origin()}${next}`).toBe(url)
  })

  test('a loopback redirect URI may use another port (RFC 8252 §7.3)', async () => {
    const page = await new PageAgent(origin()).get(
      authorizeUrl(origin(), { ...VALID, redirect_uri: 'http://127.0.0.1:49152/cb' }),
    )
    expect(page.status).toBe(200)
    expect(page.body).toContain('name="password"')
  })

  test('approve: the consent page, then a code and the state; the code buys a token that works at once', async () => {
    const agent = new PageAgent(origin())
    const { callback, consent } = await authorizeThroughPages(agent, authorizeUrl(origin(), VALID), {
      handle: 'alice',
      password: ALICE_PASSWORD,
    })
    // The consent page: the client, where the answer goes, the scopes in the contract's words.
    expect(consent).toContain(
      'Application: <strong><bdi>cli</bdi></strong> (a client registered with this server)',
    )
    expect(consent).toContain('<strong>127.0.0.1:8765</strong>')
    expect(consent).toContain('<code>data.overview</code>')
    expect(consent).toContain(
      'Overview access to datasets that the user can see but that are hidden from the public.',
    )
    expect(consent).toContain('<code>public</code>')
    expect(consent).toContain('Signed in as <strong>alice</strong>')
    const form = formWith(consent, 'decision')
    expect(form.method).toBe('post')
    expect(
      form.controls.filter((control) => control.name === 'decision').map((control) => control.value),
    ).toEqual(['approve', 'deny'])
    expect(form.controls.some((control) => control.name === 'csrf_token' && control.value.length > 20)).toBe(
      true,
    )
    expect(form.controls.map((control) => control.name)).not.toContain('redirect_uri')

    expect(`${callback.origin}${callback.pathname}`).toBe(CLI_REDIRECT)
    expect(callback.searchParams.get('state')).toBe('st-123')
    const code = callback.searchParams.get('code')!
    const token = await postForm(
      `${origin()}/oauth/token`,
      { grant_type: 'authorization_code', code, redirect_uri: CLI_REDIRECT, code_verifier: RFC_VERIFIER },
      { authorization: basic('cli', CLI_SECRET) },
    )
    expect(token.status).toBe(200)
    expect(token.body).toMatchObject({
      token_type: 'Bearer',
      expires_in: 3600,
      scope: 'public data.overview',
    })
    expect(token.body.access_token).toMatch(/^dao_[0-9A-Za-z]{38}$/)
    expect(typeof token.body.refresh_token).toBe('string')
    expect(await callApi(origin(), '/api/v1/users/alice/datasets', token.body.access_token as string)).toBe(
      200,
    )
  })

  test('deny: error=access_denied and the state, no code', async () => {
    const agent = new PageAgent(origin())
    const { callback } = await authorizeThroughPages(agent, authorizeUrl(origin(), VALID), {
      handle: 'alice',
      password: ALICE_PASSWORD,
      decision: 'deny',
    })
    expect(callback.searchParams.get('error')).toBe('access_denied')
    expect(callback.searchParams.get('state')).toBe('st-123')
    expect(callback.searchParams.has('code')).toBe(false)
  })

  test('a session client (no client_id): named as such, a token without a refresh token', async () => {
    const { verifier, challenge } = pkcePair()
    const redirect = 'http://127.0.0.1:50505/callback'
    const agent = new PageAgent(origin())
    const { callback, consent } = await authorizeThroughPages(
      agent,
      authorizeUrl(origin(), {
        ...VALID,
        client_id: undefined,
        redirect_uri: redirect,
        code_challenge: challenge,
      }),
      { handle: 'bob', password: BOB_PASSWORD },
    )
    expect(consent).toContain('this application on your computer (no client id)')
    const token = await postForm(`${origin()}/oauth/token`, {
      grant_type: 'authorization_code',
      code: callback.searchParams.get('code')!,
      redirect_uri: redirect,
      code_verifier: verifier,
    })
    expect(token.status).toBe(200)
    expect(token.body.refresh_token).toBeUndefined()
    expect(
      await callApi(origin(), '/api/v1/organizations/acme/datasets', token.body.access_token as string),
    ).toBe(200)
  })

  test('signed in already: the consent page at once', async () => {
    const agent = new PageAgent(origin())
    await authorizeThroughPages(agent, authorizeUrl(origin(), VALID), {
      handle: 'alice',
      password: ALICE_PASSWORD,
    })
    const page = await agent.get(authorizeUrl(origin(), VALID))
    expect(page.status).toBe(200)
    expect(page.body).toContain('name="decision"')
    expect(page.body).not.toContain('name="password"')
  })

  describe('the consent answer', () => {
    async function consentPage(agent: PageAgent, params: Params = VALID) {
      const first = await agent.get(authorizeUrl(origin(), params))
      const page = first.body.includes('name="password"')
        ? await agent.submit(formWith(first.body, 'password'), { handle: 'alice', password: ALICE_PASSWORD })
        : first
      return formWith(page.body, 'decision')
    }

    test('without the CSRF token: 403, and the consent can still be answered', async () => {
      const agent = new PageAgent(origin())
      const form = await consentPage(agent)
      const consent = form.controls.find((control) => control.name === 'consent')!.value
      const forged = await agent.post(form.action, new URLSearchParams({ consent, decision: 'approve' }))
      expect(forged.status).toBe(403)
      const real = await agent.submit(form, {}, { button: 'approve' })
      expect(real.status).toBe(303)
      expect(new URL(real.location!).searchParams.has('code')).toBe(true)
    })

    test('answered twice: the second answer is refused', async () => {
      const agent = new PageAgent(origin())
      const form = await consentPage(agent)
      expect((await agent.submit(form, {}, { button: 'approve' })).status).toBe(303)
      const again = await agent.submit(form, {}, { button: 'approve' })
      expect(again.status).toBe(400)
      expect(again.location).toBeUndefined()
    })

    test('re-posted request parameters are ignored: the stored request is what is approved', async () => {
      const agent = new PageAgent(origin())
      const form = await consentPage(agent)
      const answer = await agent.submit(
        form,
        { redirect_uri: 'https://evil.example/cb', scope: 'data.edit', state: 'forged' },
        { button: 'approve' },
      )
      const location = new URL(answer.location!)
      expect(`${location.origin}${location.pathname}`).toBe(CLI_REDIRECT)
      expect(location.searchParams.get('state')).toBe('st-123')
    })

    test("another session's consent id is refused", async () => {
      const alice = new PageAgent(origin())
      const form = await consentPage(alice)
      const mallory = new PageAgent(origin())
      const own = await consentPage(mallory)
      const stolen = form.controls.find((control) => control.name === 'consent')!.value
      const csrf = own.controls.find((control) => control.name === 'csrf_token')!.value
      const answer = await mallory.post(
        own.action,
        new URLSearchParams({ csrf_token: csrf, consent: stolen, decision: 'approve' }),
      )
      expect(answer.status).toBe(400)
      expect(answer.location).toBeUndefined()
    })

    test('an unknown decision is refused and the consent stays answerable', async () => {
      const agent = new PageAgent(origin())
      const form = await consentPage(agent)
      expect((await agent.submit(form, { decision: 'maybe' })).status).toBe(400)
      expect((await agent.submit(form, {}, { button: 'deny' })).status).toBe(303)
    })

    test('a consent page left open for more than 10 minutes expires', async () => {
      const agent = new PageAgent(origin())
      const form = await consentPage(agent)
      clock.advance(10 * 60_000 + 1)
      // The session stays alive: sessions end after 30 minutes idle.
      const answer = await agent.submit(form, {}, { button: 'approve' })
      expect(answer.status).toBe(400)
      expect(answer.body).toContain('expired or was already answered')
    })
  })

  describe('PKCE and the code at the token endpoint', () => {
    async function freshCode(challenge = RFC_CHALLENGE, params: Params = {}): Promise<string> {
      const agent = new PageAgent(origin())
      const { callback } = await authorizeThroughPages(
        agent,
        authorizeUrl(origin(), { ...VALID, code_challenge: challenge, ...params }),
        { handle: 'alice', password: ALICE_PASSWORD },
      )
      return callback.searchParams.get('code')!
    }

    const redeem = (code: string, fields: Record<string, string | undefined>) => {
      const body = new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: CLI_REDIRECT })
      for (const [name, value] of Object.entries(fields)) if (value !== undefined) body.set(name, value)
      return postForm(`${origin()}/oauth/token`, body, { authorization: basic('cli', CLI_SECRET) })
    }

    const OUTCOMES: readonly [string, Record<string, string | undefined>, number, string | undefined][] = [
      ['the RFC 7636 Appendix B verifier', { code_verifier: RFC_VERIFIER }, 200, undefined],
      ['a wrong verifier', { code_verifier: pkcePair().verifier }, 400, 'invalid_grant'],
      ['the challenge sent as the verifier', { code_verifier: RFC_CHALLENGE }, 400, 'invalid_grant'],
      ['no verifier', { code_verifier: undefined }, 400, 'invalid_grant'],
      [
        'a malformed verifier (42 characters)',
        { code_verifier: RFC_VERIFIER.slice(0, 42) },
        400,
        'invalid_request',
      ],
      [
        'a verifier with a forbidden character',
        { code_verifier: `${RFC_VERIFIER.slice(0, 42)}!` },
        400,
        'invalid_request',
      ],
      [
        'another redirect URI',
        { code_verifier: RFC_VERIFIER, redirect_uri: 'http://127.0.0.1:8766/cb' },
        400,
        'invalid_grant',
      ],
    ]

    test.each(OUTCOMES)('%s → %s %s', async (_title, fields, status, error) => {
      const answer = await redeem(await freshCode(), fields)
      expect(answer.status).toBe(status)
      if (error !== undefined) expect(answer.body.error).toBe(error)
      expect(answer.headers.get('cache-control')).toBe('no-store')
      expect(answer.headers.get('pragma')).toBe('no-cache')
    })

    test('a reused code is invalid_grant and revokes the token it issued', async () => {
      const code = await freshCode()
      const first = await redeem(code, { code_verifier: RFC_VERIFIER })
      expect(first.status).toBe(200)
      const token = first.body.access_token as string
      expect(await callApi(origin(), '/api/v1/users/alice/datasets', token)).toBe(200)
      const second = await redeem(code, { code_verifier: RFC_VERIFIER })
      expect(second.status).toBe(400)
      expect(second.body.error).toBe('invalid_grant')
      expect(await callApi(origin(), '/api/v1/users/alice/datasets', token)).toBe(401)
    })

    test('a code is valid for 60 seconds at most', async () => {
      const code = await freshCode()
      clock.advance(60_001)
      const answer = await redeem(code, { code_verifier: RFC_VERIFIER })
      expect(answer.status).toBe(400)
      expect(answer.body.error).toBe('invalid_grant')
    })

    test('a code is bound to its client: another client cannot redeem it', async () => {
      const code = await freshCode()
      const answer = await postForm(`${origin()}/oauth/token`, {
        grant_type: 'authorization_code',
        code,
        redirect_uri: CLI_REDIRECT,
        code_verifier: RFC_VERIFIER,
      })
      expect(answer.status).toBe(400)
      expect(answer.body.error).toBe('invalid_grant')
    })

    test('the token carries the scopes granted, and no more', async () => {
      const code = await freshCode(RFC_CHALLENGE, { scope: undefined })
      const answer = await redeem(code, { code_verifier: RFC_VERIFIER })
      expect(answer.body.scope).toBe('public')
      const token = answer.body.access_token as string
      // Only public datasets with a public-only token: diary is hidden, open is listed.
      const listing = await fetch(`${origin()}/api/v1/users/alice/datasets`, {
        headers: { authorization: `Bearer ${token}` },
      })
      const body = (await listing.json()) as { results: { name: string }[] }
      expect(body.results.map((result) => result.name)).toEqual(['open'])
    })
  })

  test('every form of the flow carries a CSRF token', async () => {
    const agent = new PageAgent(origin())
    const signIn = await agent.get(authorizeUrl(origin(), VALID))
    const consent = await agent.submit(formWith(signIn.body, 'password'), {
      handle: 'alice',
      password: ALICE_PASSWORD,
    })
    for (const page of [signIn, consent]) {
      const forms = parseForms(page.body).filter((form) => form.method === 'post')
      expect(forms.length).toBeGreaterThan(0)
      for (const form of forms)
        expect(form.controls.some((control) => control.name === 'csrf_token')).toBe(true)
    }
  })
})
