import { describe, expect, it } from 'vitest'
import { ConfigError, InvalidArgumentError, TokenStoreError } from '../../src/errors.js'
import { decideDeviceAuthorization } from '../../src/oauth/decide-device-authorization.js'
import { handleDeviceAuthorizationRequest } from '../../src/oauth/handle-device-authorization-request.js'
import { DEVICE_CODE_GRANT_TYPE, handleTokenRequest } from '../../src/oauth/handle-token-request.js'
import type { DeviceGrantRecord } from '../../src/oauth/oauth-state-records.js'
import { pollDeviceGrant } from '../../src/oauth/poll-device-grant.js'
import {
  type DeviceAuthorizationResponseBody,
  startDeviceAuthorization,
} from '../../src/oauth/start-device-authorization.js'
import {
  MAX_USER_CODE_FAILURES,
  USER_CODE_FAILURE_WINDOW_MS,
  verifyUserCode,
} from '../../src/oauth/verify-user-code.js'
import { hashTokenValue } from '../../src/tokens/token-hash.js'
import {
  basic,
  CLI_SECRET,
  createWorld,
  NOW,
  pkcePair,
  RFC_CHALLENGE,
  type World,
  wrapStore,
} from './fixtures.js'

const NO_STORE = { 'Cache-Control': 'no-store', Pragma: 'no-cache' }
const S = 1000

type Device = {
  readonly world: World
  readonly body: DeviceAuthorizationResponseBody
  readonly verifier: string
  readonly challenge: string
}

async function startDevice(
  params: Record<string, string> = {},
  world = createWorld(),
  authorization?: string,
): Promise<Device> {
  const { verifier, challenge } = pkcePair()
  const response = await handleDeviceAuthorizationRequest(
    { scope: 'data.metadata', code_challenge: challenge, code_challenge_method: 'S256', ...params },
    {
      clients: world.options(NOW).clients,
      state: world.state,
      now: NOW,
      verificationUri: 'https://auth.example/device',
      authorization,
    },
  )
  if (response.status !== 200) throw new Error(JSON.stringify(response.body))
  return { world, body: response.body as DeviceAuthorizationResponseBody, verifier, challenge }
}

function poll(
  device: Device,
  now: number,
  extra: Record<string, string | undefined> = {},
  authorization?: string,
) {
  return handleTokenRequest(
    {
      grant_type: DEVICE_CODE_GRANT_TYPE,
      device_code: device.body.device_code,
      code_verifier: device.verifier,
      ...extra,
    },
    device.world.options(now, { authorization }),
  )
}

async function decide(device: Device, decision: 'approve' | 'deny', now = NOW + S, userId = 'alice') {
  const verified = await verifyUserCode({
    userCode: device.body.user_code,
    attemptKey: 'session-1',
    now,
    store: device.world.state,
  })
  if (!verified.ok) throw new Error(verified.reason)
  return decideDeviceAuthorization({
    grantId: verified.grant.grantId,
    userId,
    decision,
    now,
    store: device.world.state,
  })
}

async function answer(
  device: Device,
  now: number,
  extra: Record<string, string | undefined> = {},
): Promise<string> {
  const response = await poll(device, now, extra)
  return response.status === 200 ? 'token' : (response.body as { error: string }).error
}

describe('device authorization endpoint (RFC 8628 §3.1–3.2, with PKCE)', () => {
  it('answers device_code, user_code, verification URIs, expires_in 600 and interval 5', async () => {
    const { body, world } = await startDevice()
    expect(body).toEqual({
      device_code: expect.stringMatching(/^[0-9A-Za-z]{32}$/),
      user_code: expect.stringMatching(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/),
      verification_uri: 'https://auth.example/device',
      verification_uri_complete: `https://auth.example/device?user_code=${body.user_code}`,
      expires_in: 600,
      interval: 5,
    })
    const grant = await world.state.findDeviceGrant(hashTokenValue(body.device_code), NOW)
    expect(grant).toMatchObject({
      status: 'pending',
      scopes: ['public', 'data.metadata'],
      expiresAt: NOW + 600 * S,
      interval: 5,
    })
    expect(grant).not.toHaveProperty('clientId')
    expect(JSON.stringify(grant)).not.toContain(body.device_code)
  })

  it('sends no-store headers', async () => {
    const world = createWorld()
    const response = await handleDeviceAuthorizationRequest(
      { code_challenge: RFC_CHALLENGE, code_challenge_method: 'S256' },
      {
        clients: world.options(NOW).clients,
        state: world.state,
        now: NOW,
        verificationUri: 'https://a/device',
      },
    )
    expect(response).toMatchObject({ status: 200, headers: NO_STORE, body: { interval: 5 } })
  })

  it('binds the grant to an authenticated registered client', async () => {
    const device = await startDevice({}, createWorld(), basic('cli', CLI_SECRET))
    const grant = await device.world.state.findDeviceGrant(hashTokenValue(device.body.device_code), NOW)
    expect(grant?.clientId).toBe('cli')
  })

  it.each([
    ['a missing code_challenge', { code_challenge: undefined }, 'invalid_request', 400],
    ['a missing code_challenge_method', { code_challenge_method: undefined }, 'invalid_request', 400],
    ['code_challenge_method=plain', { code_challenge_method: 'plain' }, 'invalid_request', 400],
    ['code_challenge_method=s256', { code_challenge_method: 's256' }, 'invalid_request', 400],
    ['a malformed code_challenge', { code_challenge: 'abc' }, 'invalid_request', 400],
    ['an unknown scope', { scope: 'workflow.read' }, 'invalid_scope', 400],
    ['an unknown client', { client_id: 'nobody' }, 'invalid_client', 401],
    ['a confidential client without its secret', { client_id: 'cli' }, 'invalid_client', 401],
  ])('refuses %s with %s', async (_name, overrides, error, status) => {
    const world = createWorld()
    const params = {
      scope: 'data.metadata',
      code_challenge: RFC_CHALLENGE,
      code_challenge_method: 'S256',
      ...overrides,
    }
    const response = await handleDeviceAuthorizationRequest(params, {
      clients: world.options(NOW).clients,
      state: world.state,
      now: NOW,
      verificationUri: 'https://a/device',
    })
    expect(response).toMatchObject({ status, body: { error } })
  })

  it('takes a configured lifetime and interval', async () => {
    const world = createWorld()
    const response = await handleDeviceAuthorizationRequest(
      { code_challenge: RFC_CHALLENGE, code_challenge_method: 'S256' },
      {
        clients: world.options(NOW).clients,
        state: world.state,
        now: NOW,
        verificationUri: 'https://a/device?x=1',
        expiresIn: 300,
        interval: 10,
      },
    )
    expect(response.body).toMatchObject({
      expires_in: 300,
      interval: 10,
      verification_uri_complete: expect.stringMatching(/^https:\/\/a\/device\?x=1&user_code=/),
    })
  })

  it.each([
    ['an expiresIn over an hour', { expiresIn: 3601 }, ConfigError],
    ['a zero interval', { interval: 0 }, ConfigError],
    ['an empty verificationUri', { verificationUri: '' }, ConfigError],
    ['a verificationUri with a fragment', { verificationUri: 'https://a/device#x' }, ConfigError],
    ['a bad clock', { now: 1.5 }, InvalidArgumentError],
    ['a bad realm', { realm: 'a\\b' }, ConfigError],
  ])('throws for %s', async (_name, overrides, type) => {
    const world = createWorld()
    await expect(
      handleDeviceAuthorizationRequest(
        { code_challenge: RFC_CHALLENGE, code_challenge_method: 'S256' },
        {
          clients: world.options(NOW).clients,
          state: world.state,
          now: NOW,
          verificationUri: 'https://a/device',
          ...overrides,
        },
      ),
    ).rejects.toThrow(type)
  })

  it('draws another user code when one is taken', async () => {
    const world = createWorld()
    let refusals = 2
    const state = wrapStore(world.state, {
      saveDeviceGrant: async (record) => (refusals-- > 0 ? false : world.state.saveDeviceGrant(record)),
    })
    const body = await startDeviceAuthorization({
      codeChallenge: RFC_CHALLENGE,
      codeChallengeMethod: 'S256',
      verificationUri: 'https://a/device',
      now: NOW,
      store: state,
    })
    expect(body.user_code).toMatch(/^[A-Z]{4}-[A-Z]{4}$/)
  })

  it('gives up with server_error 503 when no user code is free', async () => {
    const world = createWorld()
    const state = wrapStore(world.state, { saveDeviceGrant: async () => false })
    const response = await handleDeviceAuthorizationRequest(
      { code_challenge: RFC_CHALLENGE, code_challenge_method: 'S256' },
      { clients: world.options(NOW).clients, state, now: NOW, verificationUri: 'https://a/device' },
    )
    expect(response).toMatchObject({ status: 503, body: { error: 'server_error' } })
    expect(response.error?.cause).toBeInstanceOf(TokenStoreError)
  })
})

// Design §7: the answers of a device-code poll.
describe('device-code polling (RFC 8628 §3.4–3.5)', () => {
  it('answers authorization_pending to the first poll, however early', async () => {
    const device = await startDevice()
    expect(await answer(device, NOW)).toBe('authorization_pending')
  })

  it('answers slow_down to a poll within the interval, and raises the interval by 5 s for good', async () => {
    const device = await startDevice()
    expect(await answer(device, NOW)).toBe('authorization_pending')
    expect(await answer(device, NOW + 4_999)).toBe('slow_down')
    // The interval is now 10 s, measured from the previous poll (the slow_down one).
    expect(await answer(device, NOW + 4_999 + 9_999)).toBe('slow_down')
    // Now 15 s.
    expect(await answer(device, NOW + 4_999 + 9_999 + 15_000)).toBe('authorization_pending')
    expect(await answer(device, NOW + 4_999 + 9_999 + 15_000 + 15_000)).toBe('authorization_pending')
    const grant = await device.world.state.findDeviceGrant(hashTokenValue(device.body.device_code), NOW)
    expect(grant?.interval).toBe(15)
  })

  it('answers authorization_pending to a poll exactly one interval later', async () => {
    const device = await startDevice()
    await answer(device, NOW)
    expect(await answer(device, NOW + 5_000)).toBe('authorization_pending')
  })

  it('issues the token at once after approval, even to a fast poll, then redeems once', async () => {
    const device = await startDevice()
    await answer(device, NOW)
    expect(await decide(device, 'approve')).toEqual({ ok: true, status: 'approved' })
    const response = await poll(device, NOW + 1_001)
    expect(response).toMatchObject({
      status: 200,
      headers: NO_STORE,
      body: { token_type: 'Bearer', expires_in: 3600, scope: 'public data.metadata' },
    })
    expect(response.body).not.toHaveProperty('refresh_token')
    const record = await device.world.token((response.body as { access_token: string }).access_token)
    expect(record).toMatchObject({ kind: 'oauth', userId: 'alice', scopes: ['public', 'data.metadata'] })
    expect(await answer(device, NOW + 60_000)).toBe('invalid_grant')
  })

  it('answers access_denied at once after a denial, and for good', async () => {
    const device = await startDevice()
    await answer(device, NOW)
    expect(await decide(device, 'deny')).toEqual({ ok: true, status: 'denied' })
    expect(await answer(device, NOW + 1_001)).toBe('access_denied')
    expect(await answer(device, NOW + 1_002)).toBe('access_denied')
    expect(await answer(device, NOW + 700 * S)).toBe('access_denied')
  })

  it('answers expired_token from expires_in on, even to an approved grant', async () => {
    const device = await startDevice()
    await decide(device, 'approve')
    expect(await answer(device, NOW + 600 * S)).toBe('expired_token')
    expect(await answer(device, NOW + 600 * S + 1)).toBe('expired_token')
  })

  it('answers expired_token to a pending grant, then invalid_grant once it is forgotten', async () => {
    const device = await startDevice()
    expect(await answer(device, NOW + 600 * S - 1)).toBe('authorization_pending')
    expect(await answer(device, NOW + 600 * S)).toBe('expired_token')
    expect(await answer(device, NOW + 1200 * S)).toBe('invalid_grant')
  })

  it('gives a registered offline client a refresh token', async () => {
    const device = await startDevice({}, createWorld(), basic('cli', CLI_SECRET))
    await decide(device, 'approve')
    const response = await poll(device, NOW + 2 * S, {}, basic('cli', CLI_SECRET))
    expect(response.body).toMatchObject({ refresh_token: expect.any(String) })
    const record = await device.world.token((response.body as { access_token: string }).access_token)
    expect(record?.clientId).toBe('cli')
  })

  // Design §7: PKCE at redemption, and the bindings of a device code.
  it.each([
    ['a missing verifier', { code_verifier: undefined }, 'invalid_grant'],
    ['a wrong verifier', { code_verifier: 'a'.repeat(43) }, 'invalid_grant'],
    ['the challenge as verifier', 'challenge' as const, 'invalid_grant'],
    ['a malformed verifier', { code_verifier: 'short' }, 'invalid_request'],
    ['a missing device_code', { device_code: undefined }, 'invalid_request'],
    ['an unknown device_code', { device_code: 'B'.repeat(32) }, 'invalid_grant'],
    ['another client', { client_id: 'web' }, 'invalid_grant'],
  ] satisfies [string, Record<string, string | undefined> | 'challenge', string][])(
    'refuses %s with %s, without touching the grant',
    async (_name, overrides, error) => {
      const device = await startDevice()
      await decide(device, 'approve')
      const extra = overrides === 'challenge' ? { code_verifier: device.challenge } : overrides
      expect(await answer(device, NOW + 2 * S, extra)).toBe(error)
      expect(await answer(device, NOW + 2 * S)).toBe('token')
    },
  )

  it('does not let a wrong-verifier poll cause slow_down for the real device', async () => {
    const device = await startDevice()
    await answer(device, NOW)
    await answer(device, NOW + 1, { code_verifier: 'a'.repeat(43) })
    expect(await answer(device, NOW + 5_000)).toBe('authorization_pending')
  })

  it('redeems once when two polls race after approval', async () => {
    const device = await startDevice()
    await decide(device, 'approve')
    const responses = await Promise.all([
      poll(device, NOW + 2 * S),
      poll(device, NOW + 2 * S),
      poll(device, NOW + 2 * S),
    ])
    expect(responses.map((r) => r.status).sort()).toEqual([200, 400, 400])
    expect(await device.world.tokens.listByOwner('alice')).toHaveLength(1)
  })
})

describe('pollDeviceGrant (the pure rule)', () => {
  const grant: DeviceGrantRecord = {
    deviceCodeHash: 'a'.repeat(64),
    userCodeHash: 'b'.repeat(64),
    version: 3,
    scopes: ['public'],
    codeChallenge: RFC_CHALLENGE,
    createdAt: NOW,
    expiresAt: NOW + 600 * S,
    retainUntil: NOW + 1200 * S,
    interval: 5,
    status: 'pending',
  }

  it.each([
    ['a first poll', {}, NOW, 'authorization_pending'],
    ['a poll 4.999 s after the last', { lastPolledAt: NOW }, NOW + 4_999, 'slow_down'],
    ['a poll 5 s after the last', { lastPolledAt: NOW }, NOW + 5_000, 'authorization_pending'],
    [
      'an approved grant polled at once',
      { status: 'approved', lastPolledAt: NOW, userId: 'a' },
      NOW,
      'issue',
    ],
    ['a denied grant polled at once', { status: 'denied', lastPolledAt: NOW }, NOW, 'access_denied'],
    ['a denied grant after expiry', { status: 'denied' }, NOW + 600 * S, 'access_denied'],
    ['a pending grant at expiry', {}, NOW + 600 * S, 'expired_token'],
    ['an approved grant at expiry', { status: 'approved' }, NOW + 600 * S, 'expired_token'],
    ['a redeemed grant', { status: 'redeemed' }, NOW, 'invalid_grant'],
    ['a NaN clock', {}, Number.NaN, 'expired_token'],
  ] as const)('%s → %s', (_name, overrides, now, expected) => {
    expect(pollDeviceGrant({ ...grant, ...overrides }, now).answer).toBe(expected)
  })

  it('writes the new interval and poll time on slow_down, and the redemption on issue', () => {
    expect(pollDeviceGrant({ ...grant, lastPolledAt: NOW }, NOW + 1).next).toMatchObject({
      version: 4,
      interval: 10,
      lastPolledAt: NOW + 1,
    })
    expect(pollDeviceGrant({ ...grant, status: 'approved' }, NOW + 7).next).toMatchObject({
      version: 4,
      status: 'redeemed',
      redeemedAt: NOW + 7,
    })
    expect(pollDeviceGrant({ ...grant, status: 'denied' }, NOW).next).toBeUndefined()
  })
})

describe('verification page: user codes (RFC 8628 §3.3, §5.1)', () => {
  it.each([
    ['as displayed', (code: string) => code],
    ['in lower case', (code: string) => code.toLowerCase()],
    ['without the dash', (code: string) => code.replace('-', '')],
    ['with spaces', (code: string) => code.split('').join(' ')],
    ['with a dot and surrounding space', (code: string) => ` ${code.replace('-', '.')} `],
  ])('matches the code typed %s', async (_name, type) => {
    const device = await startDevice()
    const result = await verifyUserCode({
      userCode: type(device.body.user_code),
      attemptKey: 's',
      now: NOW,
      store: device.world.state,
    })
    expect(result).toEqual({
      ok: true,
      grant: {
        grantId: hashTokenValue(device.body.device_code),
        userCode: device.body.user_code,
        scopes: expect.anything(),
        expiresAt: NOW + 600 * S,
      },
    })
  })

  it('names the client and scopes for the consent page', async () => {
    const device = await startDevice({ scope: 'data.data' }, createWorld(), basic('cli', CLI_SECRET))
    const result = await verifyUserCode({
      userCode: device.body.user_code,
      attemptKey: 's',
      now: NOW,
      store: device.world.state,
    })
    expect(result.ok && result.grant.clientId).toBe('cli')
    expect(result.ok && result.grant.scopes.granted).toEqual(['public', 'data.data'])
  })

  it('locks a verifying session after 5 wrong entries, even against the right code, until the window ends', async () => {
    const device = await startDevice()
    const store = device.world.state
    const attempt = (userCode: string, now = NOW) =>
      verifyUserCode({ userCode, attemptKey: 'session-9', now, store })
    const left: number[] = []
    for (let i = 0; i < MAX_USER_CODE_FAILURES; i++) {
      const result = await attempt(i % 2 === 0 ? 'BBBB-BBBB' : 'not a code')
      if (result.ok) throw new Error('unexpected')
      left.push(result.attemptsLeft)
      expect(result.reason).toBe(i === MAX_USER_CODE_FAILURES - 1 ? 'locked' : 'invalid_code')
    }
    expect(left).toEqual([4, 3, 2, 1, 0])
    expect(await attempt(device.body.user_code)).toEqual({ ok: false, reason: 'locked', attemptsLeft: 0 })
    // Another session is not locked; the locked one is free again after the window.
    expect(
      (await verifyUserCode({ userCode: device.body.user_code, attemptKey: 'other', now: NOW, store })).ok,
    ).toBe(true)
    // (By then this code has expired: the answer says so instead of "locked".)
    expect(await attempt(device.body.user_code, NOW + USER_CODE_FAILURE_WINDOW_MS)).toEqual({
      ok: false,
      reason: 'expired',
      attemptsLeft: 5,
    })
  })

  it('does not reset the count on a correct entry', async () => {
    const device = await startDevice()
    const store = device.world.state
    for (let i = 0; i < 4; i++)
      await verifyUserCode({ userCode: 'BBBB-BBBB', attemptKey: 'k', now: NOW, store })
    expect(
      (await verifyUserCode({ userCode: device.body.user_code, attemptKey: 'k', now: NOW, store })).ok,
    ).toBe(true)
    expect(await verifyUserCode({ userCode: 'BBBB-BBBB', attemptKey: 'k', now: NOW, store })).toMatchObject({
      reason: 'locked',
    })
  })

  it('refuses a correct code if parallel wrong entries locked the session meanwhile', async () => {
    const device = await startDevice()
    const world = device.world
    let counted = 0
    const store = wrapStore(world.state, {
      countUserCodeFailures: async () => (counted++ === 0 ? 0 : MAX_USER_CODE_FAILURES),
    })
    expect(
      await verifyUserCode({ userCode: device.body.user_code, attemptKey: 'k', now: NOW, store }),
    ).toEqual({
      ok: false,
      reason: 'locked',
      attemptsLeft: 0,
    })
  })

  it('answers expired for an expired code and already_decided for a decided one, without a strike', async () => {
    const expired = await startDevice()
    const late = await verifyUserCode({
      userCode: expired.body.user_code,
      attemptKey: 'k',
      now: NOW + 600 * S,
      store: expired.world.state,
    })
    expect(late).toEqual({ ok: false, reason: 'expired', attemptsLeft: 5 })
    const decided = await startDevice()
    await decide(decided, 'deny')
    const again = await verifyUserCode({
      userCode: decided.body.user_code,
      attemptKey: 'k',
      now: NOW + 2 * S,
      store: decided.world.state,
    })
    expect(again).toEqual({ ok: false, reason: 'already_decided', attemptsLeft: 5 })
  })

  it('needs an attempt key', async () => {
    const world = createWorld()
    await expect(
      verifyUserCode({ userCode: 'BBBB-BBBB', attemptKey: '', now: NOW, store: world.state }),
    ).rejects.toThrow(InvalidArgumentError)
  })
})

describe('consent: decideDeviceAuthorization', () => {
  it.each([
    ['an unknown grant', async (_device: Device) => ({ grantId: 'c'.repeat(64), now: NOW }), 'unknown_grant'],
    [
      'an expired grant',
      async (d: Device) => ({ grantId: hashTokenValue(d.body.device_code), now: NOW + 600 * S }),
      'expired',
    ],
    [
      'a decided grant',
      async (d: Device) => {
        await decide(d, 'approve')
        return { grantId: hashTokenValue(d.body.device_code), now: NOW + 2 * S }
      },
      'already_decided',
    ],
  ])('refuses %s', async (_name, setup, reason) => {
    const device = await startDevice()
    const { grantId, now } = await setup(device)
    const result = await decideDeviceAuthorization({
      grantId,
      userId: 'bob',
      decision: 'deny',
      now,
      store: device.world.state,
    })
    expect(result).toEqual({ ok: false, reason })
  })

  it('records who decided', async () => {
    const device = await startDevice()
    await decide(device, 'approve', NOW + 3 * S, 'carol')
    const grant = await device.world.state.findDeviceGrant(
      hashTokenValue(device.body.device_code),
      NOW + 3 * S,
    )
    expect(grant).toMatchObject({ status: 'approved', userId: 'carol', decidedAt: NOW + 3 * S })
  })

  it.each([
    ['a bad decision', { decision: 'maybe' as 'approve' }],
    ['an empty user', { userId: '' }],
  ])('throws for %s', async (_name, overrides) => {
    const world = createWorld()
    await expect(
      decideDeviceAuthorization({
        grantId: 'x',
        userId: 'a',
        decision: 'approve',
        now: NOW,
        store: world.state,
        ...overrides,
      }),
    ).rejects.toThrow(InvalidArgumentError)
  })
})
