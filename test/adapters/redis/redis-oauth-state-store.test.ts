import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { RedisOAuthStateStore, RedisTokenStore } from '../../../adapters/redis/index.js'
import { ConfigError, TokenStoreError } from '../../../src/errors.js'
import { decideDeviceAuthorization } from '../../../src/oauth/decide-device-authorization.js'
import { DEVICE_CODE_GRANT_TYPE, handleTokenRequest } from '../../../src/oauth/handle-token-request.js'
import { issueAuthorizationCode } from '../../../src/oauth/issue-authorization-code.js'
import type { AuthorizationCodeRecord, DeviceGrantRecord } from '../../../src/oauth/oauth-state-records.js'
import { startDeviceAuthorization } from '../../../src/oauth/start-device-authorization.js'
import { validateAuthorizationRequest } from '../../../src/oauth/validate-authorization-request.js'
import { verifyUserCode } from '../../../src/oauth/verify-user-code.js'
import { generateRandomBase62 } from '../../../src/tokens/token-format.js'
import { hashTokenValue } from '../../../src/tokens/token-hash.js'
import { tokenStatus } from '../../../src/tokens/token-record.js'
import { lookupClient, NOW, pkcePair, RFC_CHALLENGE } from '../../oauth/fixtures.js'
import { type RedisServer, startRedisServer } from './redis-server.js'

// OAuth state on a real Redis: single use across instances, Redis expiry, garbage. Each "instance"
// is a pair of stores with connections of their own, as two server processes would have.

let server: RedisServer
let admin: Redis
const closing: { close(): Promise<void> }[] = []

interface Instance {
  readonly state: RedisOAuthStateStore
  readonly tokens: RedisTokenStore
}

async function instance(): Promise<Instance> {
  const state = new RedisOAuthStateStore({ redis: server.url })
  // The tokens' clock is the tests' (NOW), by which the records they issue are within their end.
  const tokens = new RedisTokenStore({ redis: server.url, now: () => NOW })
  closing.push(state, tokens)
  await Promise.all([state.ready(), tokens.ready()])
  return { state, tokens }
}

beforeAll(async () => {
  server = await startRedisServer()
  admin = new Redis(server.url)
})

afterAll(async () => {
  await Promise.all(closing.map((store) => store.close()))
  admin?.disconnect()
  await server?.stop()
})

function optionsFor(at: Instance) {
  return { clients: lookupClient, state: at.state, tokens: at.tokens, now: NOW }
}

function randomHash(): string {
  return hashTokenValue(generateRandomBase62(32))
}

describe('single use across instances', () => {
  test('an authorization code redeemed by two instances at once issues at most one token', async () => {
    const [one, two] = [await instance(), await instance()]
    let issued = 0
    for (let round = 0; round < 12; round++) {
      const userId = `user-${generateRandomBase62(8)}`
      const { verifier, challenge } = pkcePair()
      const redirectUri = 'http://127.0.0.1:8765/cb'
      const validated = await validateAuthorizationRequest(
        {
          response_type: 'code',
          client_id: 'cli',
          redirect_uri: redirectUri,
          code_challenge: challenge,
          code_challenge_method: 'S256',
          scope: 'data.metadata',
        },
        lookupClient,
      )
      if (!validated.ok) throw new Error(validated.error.message)
      const { code } = await issueAuthorizationCode({
        request: validated.request,
        userId,
        now: NOW,
        store: one.state,
      })
      const params = {
        grant_type: 'authorization_code',
        code,
        redirect_uri: redirectUri,
        code_verifier: verifier,
        client_id: 'cli',
        client_secret: 'cli-secret-0123456789abcdefghijklmnopqrstuvwxyz',
      }
      const responses = await Promise.all([
        handleTokenRequest(params, optionsFor(one)),
        handleTokenRequest(params, optionsFor(two)),
      ])
      expect(responses.filter((response) => response.status === 200).length).toBeLessThanOrEqual(1)
      expect(responses.some((response) => response.status === 400)).toBe(true)
      const tokens = await one.tokens.listByOwner(userId)
      expect(tokens.length).toBeLessThanOrEqual(1)
      // The losing redemption is a reuse: whatever the code issued is revoked.
      for (const record of tokens) expect(tokenStatus(record, NOW)).toBe('revoked')
      issued += tokens.length
    }
    expect(issued).toBeGreaterThan(0)
  })

  test('a device code polled by two instances at once redeems once', async () => {
    const [one, two] = [await instance(), await instance()]
    const { verifier, challenge } = pkcePair()
    const userId = `user-${generateRandomBase62(8)}`
    const started = await startDeviceAuthorization({
      clientId: 'cli',
      scope: 'data.metadata',
      codeChallenge: challenge,
      codeChallengeMethod: 'S256',
      verificationUri: 'https://auth.example/device',
      now: NOW,
      store: one.state,
    })
    const verified = await verifyUserCode({
      userCode: started.user_code,
      attemptKey: `session-${generateRandomBase62(8)}`,
      now: NOW + 1000,
      store: two.state,
    })
    if (!verified.ok) throw new Error(verified.reason)
    const decided = await decideDeviceAuthorization({
      grantId: verified.grant.grantId,
      userId,
      decision: 'approve',
      now: NOW + 1000,
      store: two.state,
    })
    expect(decided).toEqual({ ok: true, status: 'approved' })
    const params = {
      grant_type: DEVICE_CODE_GRANT_TYPE,
      device_code: started.device_code,
      code_verifier: verifier,
      client_id: 'cli',
      client_secret: 'cli-secret-0123456789abcdefghijklmnopqrstuvwxyz',
    }
    const at = NOW + 2000
    const responses = await Promise.all(
      [one, two, one, two].map((each) => handleTokenRequest(params, { ...optionsFor(each), now: at })),
    )
    expect(responses.map((response) => response.status).sort()).toEqual([200, 400, 400, 400])
    expect(await two.tokens.listByOwner(userId)).toHaveLength(1)
  })
})

// A stored authorization code of alice, live for a minute from NOW.
function code(overrides: Partial<AuthorizationCodeRecord> = {}): AuthorizationCodeRecord {
  return {
    hash: randomHash(),
    version: 0,
    userId: 'alice',
    redirectUri: 'http://127.0.0.1:8765/cb',
    codeChallenge: RFC_CHALLENGE,
    scopes: ['public'],
    createdAt: NOW,
    expiresAt: NOW + 60_000,
    retainUntil: NOW + 60_000,
    issuedTokenIds: [],
    ...overrides,
  }
}

describe('audiences (RFC 8707) across instances', () => {
  const API = 'https://data.example.org/api/v1'
  const MCP = 'https://data.example.org/mcp'
  const resources = { known: [API, MCP], defaultResource: API }

  test('a code, the refresh family it starts and the tokens keep their audience; a refresh cannot widen it', async () => {
    const [one, two] = [await instance(), await instance()]
    const userId = `user-${generateRandomBase62(8)}`
    const { verifier, challenge } = pkcePair()
    const redirectUri = 'http://127.0.0.1:8765/cb'
    const validated = await validateAuthorizationRequest(
      {
        response_type: 'code',
        client_id: 'cli',
        redirect_uri: redirectUri,
        code_challenge: challenge,
        code_challenge_method: 'S256',
        resource: [MCP, API],
      },
      lookupClient,
      { resources },
    )
    if (!validated.ok) throw new Error(validated.error.message)
    const { code } = await issueAuthorizationCode({
      request: validated.request,
      userId,
      now: NOW,
      store: one.state,
    })
    const codeRecord = await two.state.findAuthorizationCode(hashTokenValue(code), NOW)
    expect(codeRecord?.audience).toEqual([MCP, API])
    const secret = { client_id: 'cli', client_secret: 'cli-secret-0123456789abcdefghijklmnopqrstuvwxyz' }
    const response = await handleTokenRequest(
      {
        grant_type: 'authorization_code',
        code,
        redirect_uri: redirectUri,
        code_verifier: verifier,
        resource: MCP,
        ...secret,
      },
      { ...optionsFor(two), resources },
    )
    expect(response.status).toBe(200)
    const body = response.body as { access_token: string; refresh_token: string }
    expect((await one.tokens.findByHash(hashTokenValue(body.access_token)))?.audience).toEqual([MCP])
    const family = await one.state.findRefreshFamilyByTokenHash(hashTokenValue(body.refresh_token), NOW)
    expect(family?.audience).toEqual([MCP, API])
    const widened = await handleTokenRequest(
      {
        grant_type: 'refresh_token',
        refresh_token: body.refresh_token,
        resource: 'https://evil.example/',
        ...secret,
      },
      { ...optionsFor(one), resources },
    )
    expect(widened).toMatchObject({ status: 400, body: { error: 'invalid_target' } })
  })

  test('a device grant keeps its audience', async () => {
    const [one, two] = [await instance(), await instance()]
    const record: DeviceGrantRecord = {
      deviceCodeHash: randomHash(),
      userCodeHash: randomHash(),
      version: 0,
      scopes: ['public'],
      audience: [MCP],
      codeChallenge: RFC_CHALLENGE,
      createdAt: NOW,
      expiresAt: NOW + 600_000,
      retainUntil: NOW + 1_200_000,
      interval: 5,
      status: 'pending',
    }
    await one.state.saveDeviceGrant(record)
    expect((await two.state.findDeviceGrant(record.deviceCodeHash, NOW))?.audience).toEqual([MCP])
    await expect(
      one.state.saveDeviceGrant({
        ...record,
        deviceCodeHash: randomHash(),
        userCodeHash: randomHash(),
        audience: ['x'],
      }),
    ).rejects.toThrow(TokenStoreError)
  })
})

describe('Redis expiry follows retainUntil', () => {
  test('a code expires with its retention (plus a minute of grace), moved by a replacement', async () => {
    const { state } = await instance()
    const record = code()
    await state.saveAuthorizationCode(record)
    const key = `{dap:oauth}:code:${record.hash}`
    const first = await admin.pttl(key)
    expect(first).toBeGreaterThan(110_000)
    expect(first).toBeLessThanOrEqual(120_000)
    expect(
      await state.replaceAuthorizationCode({
        ...record,
        version: 1,
        redeemedAt: NOW,
        retainUntil: NOW + 3_660_000,
      }),
    ).toBe(true)
    expect(await admin.pttl(key)).toBeGreaterThan(first + 3_500_000)
  })

  test('a device grant and its user-code index expire together', async () => {
    const { state } = await instance()
    const grant: DeviceGrantRecord = {
      deviceCodeHash: randomHash(),
      userCodeHash: randomHash(),
      version: 0,
      scopes: ['public'],
      codeChallenge: RFC_CHALLENGE,
      createdAt: NOW,
      expiresAt: NOW + 600_000,
      retainUntil: NOW + 1_200_000,
      interval: 5,
      status: 'pending',
    }
    expect(await state.saveDeviceGrant(grant)).toBe(true)
    const grantTtl = await admin.pttl(`{dap:oauth}:grant:${grant.deviceCodeHash}`)
    const indexTtl = await admin.pttl(`{dap:oauth}:user-code:${grant.userCodeHash}`)
    expect(grantTtl).toBeGreaterThan(1_200_000)
    expect(grantTtl).toBeLessThanOrEqual(1_260_000)
    expect(Math.abs(grantTtl - indexTtl)).toBeLessThan(1000)
  })

  test('a family and its token index expire together, and a counter with its window', async () => {
    const { state } = await instance()
    const id = `rf_${generateRandomBase62(16)}`
    const hash = randomHash()
    await state.saveRefreshFamily({
      id,
      version: 0,
      clientId: 'cli',
      userId: 'alice',
      scopes: ['public'],
      tokenHashes: [hash],
      accessTokens: [],
      createdAt: NOW,
      expiresAt: NOW + 86_400_000,
      retainUntil: NOW + 86_400_000,
    })
    const familyTtl = await admin.pttl(`{dap:oauth}:family:${id}`)
    expect(familyTtl).toBeGreaterThan(86_400_000)
    expect(Math.abs(familyTtl - (await admin.pttl(`{dap:oauth}:family-token:${hash}`)))).toBeLessThan(1000)
    const key = `session-${generateRandomBase62(8)}`
    await state.recordUserCodeFailure(key, NOW, 900_000)
    const counterTtl = await admin.pttl(`{dap:oauth}:user-code-failures:${key}`)
    expect(counterTtl).toBeGreaterThan(900_000)
    expect(counterTtl).toBeLessThanOrEqual(960_000)
  })
})

describe('fail closed', () => {
  test.each([
    ['not JSON', 'd', '{'],
    ['JSON that is not a code', 'd', '{"hash":"x"}'],
  ])('fails a lookup that finds %s', async (_, field, value) => {
    const { state } = await instance()
    const hash = randomHash()
    await admin.hset(`{dap:oauth}:code:${hash}`, 'v', '0', 'r', String(NOW + 60_000), field, value)
    await expect(state.findAuthorizationCode(hash, NOW)).rejects.toThrow(TokenStoreError)
  })

  test('never lets a replacement win over a record whose version is garbage', async () => {
    const { state } = await instance()
    const hash = randomHash()
    await admin.hset(`{dap:oauth}:code:${hash}`, 'v', 'zero', 'r', String(NOW), 'd', '{}')
    expect(await state.replaceAuthorizationCode(code({ hash, version: 1 }))).toBe(false)
    expect(await admin.hget(`{dap:oauth}:code:${hash}`, 'd')).toBe('{}')
  })

  test('fails at once, never waits, when Redis cannot be reached', async () => {
    const state = new RedisOAuthStateStore({ redis: 'redis://127.0.0.1:1' })
    closing.push(state)
    const start = performance.now()
    await expect(state.findAuthorizationCode(randomHash(), NOW)).rejects.toThrow(TokenStoreError)
    await expect(state.recordUserCodeFailure('k', NOW, 1000)).rejects.toThrow(TokenStoreError)
    expect(performance.now() - start).toBeLessThan(500)
    await expect(state.ready(100)).rejects.toThrow(/not ready/)
  })

  test.each([Number.NaN, -1, 0.5])('refuses the clock value %s', async (now) => {
    const { state } = await instance()
    await expect(state.findAuthorizationCode(randomHash(), now)).rejects.toThrow(TokenStoreError)
    await expect(state.countUserCodeFailures('k', now)).rejects.toThrow(TokenStoreError)
    await expect(state.recordUserCodeFailure('k', NOW, 0)).rejects.toThrow(TokenStoreError)
  })

  test('refuses bad options with a ConfigError naming the option', () => {
    expect(() => new RedisOAuthStateStore({ redis: 'localhost:6379' })).toThrow(ConfigError)
    expect(() => new RedisOAuthStateStore({ redis: server.url, commandTimeoutMs: 0 })).toThrow(
      /options\.commandTimeoutMs/,
    )
  })
})
