/**
 * Resource indicators (RFC 8707) and the issuer in authorization responses (RFC 9207) over HTTP, on
 * Express, Fastify and Hono: the known resources are the API (the default) and the seed's; the
 * consent pages name them; a token for a seed resource is refused by the API with 401
 * `invalid_token`; an unknown resource is `invalid_target` with nothing issued; a token request
 * and a refresh may narrow the audience, never widen it.
 */
import { describe, expect, test } from 'vitest'
import { FRAMEWORKS } from '../../examples/server/flags.js'
import { formWith, PageAgent, signInThrough } from './oauth-agent.js'
import {
  ALICE_PASSWORD,
  authorizeThroughPages,
  authorizeUrl,
  basic,
  CLI_REDIRECT,
  CLI_SECRET,
  callApi,
  DEVICE_GRANT,
  pkcePair,
  postForm,
  REPORTS_RESOURCE,
  RS_SECRET,
} from './oauth-fixtures.js'
import { useOAuthServers } from './oauth-harness.js'

const { origin: originOf } = useOAuthServers()
const CLI_AUTH = { authorization: basic('cli', CLI_SECRET) }
const API_PATH = '/api/v1/users/alice/datasets'

describe.each(FRAMEWORKS)('resources and iss on %s', (framework) => {
  const origin = () => originOf(framework)
  const api = () => `${origin()}/api/v1`

  async function authorizeCli(resource: readonly string[], decision: 'approve' | 'deny' = 'approve') {
    const { verifier, challenge } = pkcePair()
    const url = new URL(
      authorizeUrl(origin(), {
        response_type: 'code',
        client_id: 'cli',
        redirect_uri: CLI_REDIRECT,
        scope: 'data.data',
        state: 's',
        code_challenge: challenge,
        code_challenge_method: 'S256',
      }),
    )
    for (const value of resource) url.searchParams.append('resource', value)
    const outcome = await authorizeThroughPages(new PageAgent(origin()), url.href, {
      handle: 'alice',
      password: ALICE_PASSWORD,
      decision,
    })
    return { ...outcome, verifier }
  }

  function redeem(code: string, verifier: string, extra: Record<string, string> = {}) {
    return postForm(
      `${origin()}/oauth/token`,
      {
        grant_type: 'authorization_code',
        code,
        redirect_uri: CLI_REDIRECT,
        code_verifier: verifier,
        ...extra,
      },
      CLI_AUTH,
    )
  }

  async function introspect(token: string) {
    return (
      await postForm(`${origin()}/oauth/introspect`, { token }, { authorization: basic('rs', RS_SECRET) })
    ).body
  }

  test('no resource: the API by name on the consent page, iss on the redirect, aud the API, the API accepts it', async () => {
    const { callback, consent, verifier } = await authorizeCli([])
    expect(consent).toContain('<li>this data API</li>')
    expect(callback.searchParams.get('iss')).toBe(origin())
    const token = await redeem(callback.searchParams.get('code')!, verifier)
    expect(token.status).toBe(200)
    expect(await callApi(origin(), API_PATH, token.body.access_token as string)).toBe(200)
    expect(await introspect(token.body.access_token as string)).toMatchObject({ active: true, aud: api() })
  })

  test('a seed resource: named (escaped) on the consent page; its token is refused by the API with 401 invalid_token', async () => {
    const { callback, consent, verifier } = await authorizeCli([REPORTS_RESOURCE])
    expect(consent).toContain('<li>Reports &lt;b&gt;tool&lt;/b&gt; &amp; &quot;co&quot;</li>')
    expect(consent).not.toContain('<li>this data API</li>')
    const token = await redeem(callback.searchParams.get('code')!, verifier)
    expect(token.status).toBe(200)
    const access = token.body.access_token as string
    expect(await introspect(access)).toMatchObject({ active: true, aud: REPORTS_RESOURCE })
    const response = await fetch(`${origin()}${API_PATH}`, { headers: { authorization: `Bearer ${access}` } })
    await response.arrayBuffer()
    expect(response.status).toBe(401)
    expect(response.headers.get('www-authenticate')).toContain('error="invalid_token"')
    expect(response.headers.get('www-authenticate')).toContain('the token is for another resource')
  })

  test('both resources: aud is an array; the token request narrows to the API; a refresh may not widen', async () => {
    const { callback, verifier } = await authorizeCli([api(), REPORTS_RESOURCE])
    const token = await redeem(callback.searchParams.get('code')!, verifier, { resource: api() })
    expect(token.status).toBe(200)
    expect(await introspect(token.body.access_token as string)).toMatchObject({ aud: api() })
    expect(await introspect(token.body.refresh_token as string)).toMatchObject({
      aud: [api(), REPORTS_RESOURCE],
    })
    const widened = await postForm(
      `${origin()}/oauth/token`,
      {
        grant_type: 'refresh_token',
        refresh_token: token.body.refresh_token as string,
        resource: 'https://evil.example/mcp',
      },
      CLI_AUTH,
    )
    expect(widened).toMatchObject({ status: 400, body: { error: 'invalid_target' } })
    expect(widened.body).not.toHaveProperty('access_token')
    const narrowed = await postForm(
      `${origin()}/oauth/token`,
      {
        grant_type: 'refresh_token',
        refresh_token: token.body.refresh_token as string,
        resource: REPORTS_RESOURCE,
      },
      CLI_AUTH,
    )
    expect(narrowed.status).toBe(200)
    expect(await callApi(origin(), API_PATH, narrowed.body.access_token as string)).toBe(401)
  })

  test('a token request naming a resource the user did not approve is invalid_target, nothing issued', async () => {
    const { callback, verifier } = await authorizeCli([api()])
    const answer = await redeem(callback.searchParams.get('code')!, verifier, { resource: REPORTS_RESOURCE })
    expect(answer).toMatchObject({ status: 400, body: { error: 'invalid_target' } })
    expect(answer.body).not.toHaveProperty('access_token')
  })

  test('an unknown resource is redirected as invalid_target with iss, before any sign-in', async () => {
    const { challenge } = pkcePair()
    const url = authorizeUrl(origin(), {
      response_type: 'code',
      client_id: 'cli',
      redirect_uri: CLI_REDIRECT,
      state: 's',
      code_challenge: challenge,
      code_challenge_method: 'S256',
      resource: 'https://evil.example/mcp',
    })
    const answer = await new PageAgent(origin()).get(url)
    expect(answer.status).toBe(302)
    const location = new URL(answer.location!)
    expect(location.searchParams.get('error')).toBe('invalid_target')
    expect(location.searchParams.get('state')).toBe('s')
    expect(location.searchParams.get('iss')).toBe(origin())
  })

  test('a denial is redirected with iss', async () => {
    const { callback } = await authorizeCli([], 'deny')
    expect(callback.searchParams.get('error')).toBe('access_denied')
    expect(callback.searchParams.get('iss')).toBe(origin())
  })

  test('the device flow: an unknown resource is invalid_target; a seed resource is named on the consent page and bound to the token', async () => {
    const { verifier, challenge } = pkcePair()
    const fields = {
      client_id: 'cli',
      scope: 'data.metadata',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    }
    const refused = await postForm(
      `${origin()}/oauth/device_authorization`,
      { ...fields, resource: `${api()}#fragment` },
      CLI_AUTH,
    )
    expect(refused).toMatchObject({ status: 400, body: { error: 'invalid_target' } })
    const started = await postForm(
      `${origin()}/oauth/device_authorization`,
      { ...fields, resource: REPORTS_RESOURCE },
      CLI_AUTH,
    )
    expect(started.status).toBe(200)
    const agent = new PageAgent(origin())
    const entry = await agent.get('/device')
    const signIn = await agent.submit(formWith(entry.body, 'user_code'), {
      user_code: started.body.user_code as string,
    })
    const consent = await signInThrough(agent, signIn, 'alice', ALICE_PASSWORD)
    expect(consent.body).toContain('<li>Reports &lt;b&gt;tool&lt;/b&gt; &amp; &quot;co&quot;</li>')
    await agent.submit(formWith(consent.body, 'decision'), {}, { button: 'approve' })
    const poll = {
      grant_type: DEVICE_GRANT,
      device_code: started.body.device_code as string,
      code_verifier: verifier,
    }
    const widened = await postForm(`${origin()}/oauth/token`, { ...poll, resource: api() }, CLI_AUTH)
    expect(widened).toMatchObject({ status: 400, body: { error: 'invalid_target' } })
    const token = await postForm(`${origin()}/oauth/token`, poll, CLI_AUTH)
    expect(token.status).toBe(200)
    expect(await callApi(origin(), API_PATH, token.body.access_token as string)).toBe(401)
  })
})
