import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { decideDeviceAuthorization } from '../../src/oauth/decide-device-authorization.js'
import { DEVICE_CODE_GRANT_TYPE, handleTokenRequest } from '../../src/oauth/handle-token-request.js'
import { startDeviceAuthorization } from '../../src/oauth/start-device-authorization.js'
import { USER_CODE_ALPHABET } from '../../src/oauth/user-code.js'
import {
  MAX_USER_CODE_FAILURES,
  USER_CODE_FAILURE_WINDOW_MS,
  verifyUserCode,
} from '../../src/oauth/verify-user-code.js'
import { createWorld, NOW, pkcePair, type World } from './fixtures.js'

// A model-based test of the device flow (design §7): random sequences of polls, approvals, denials,
// wrong user codes and clock moves, run against the real functions and a ten-line model.

const EXPIRES_IN_MS = 600_000
const RETAIN_MS = 2 * EXPIRES_IN_MS

type Model = {
  now: number
  status: 'pending' | 'approved' | 'denied' | 'redeemed'
  interval: number
  lastPolledAt: number | undefined
  failures: number
  failureWindowEnd: number
}

type Real = {
  readonly world: World
  readonly deviceCode: string
  readonly userCode: string
  readonly verifier: string
  now: number
}

function failuresNow(model: Model): number {
  return model.now < model.failureWindowEnd ? model.failures : 0
}

function recordFailure(model: Model): number {
  if (model.now < model.failureWindowEnd) model.failures += 1
  else {
    model.failures = 1
    model.failureWindowEnd = model.now + USER_CODE_FAILURE_WINDOW_MS
  }
  return model.failures
}

// The answer of a poll with the right verifier, per design §7 and RFC 8628 §3.5.
function expectedPoll(model: Model): string {
  if (model.now >= NOW + RETAIN_MS) return 'invalid_grant'
  if (model.status === 'redeemed') return 'invalid_grant'
  if (model.status === 'denied') return 'access_denied'
  if (model.now >= NOW + EXPIRES_IN_MS) return 'expired_token'
  if (model.status === 'approved') {
    model.status = 'redeemed'
    return 'token'
  }
  const tooSoon = model.lastPolledAt !== undefined && model.now - model.lastPolledAt < model.interval * 1000
  model.lastPolledAt = model.now
  if (tooSoon) {
    model.interval += 5
    return 'slow_down'
  }
  return 'authorization_pending'
}

// What the verification page answers to the right user code, and what deciding then does.
function expectedVerify(model: Model): string {
  if (failuresNow(model) >= MAX_USER_CODE_FAILURES) return 'locked'
  if (model.now >= NOW + RETAIN_MS) {
    return recordFailure(model) >= MAX_USER_CODE_FAILURES ? 'locked' : 'invalid_code'
  }
  if (model.now >= NOW + EXPIRES_IN_MS) return 'expired'
  if (model.status !== 'pending') return 'already_decided'
  return 'ok'
}

async function pollReal(real: Real, verifier: string): Promise<string> {
  const response = await handleTokenRequest(
    { grant_type: DEVICE_CODE_GRANT_TYPE, device_code: real.deviceCode, code_verifier: verifier },
    real.world.options(real.now),
  )
  return response.status === 200 ? 'token' : (response.body as { error: string }).error
}

class AdvanceClock implements fc.AsyncCommand<Model, Real> {
  constructor(readonly ms: number) {}
  check = () => true
  async run(model: Model, real: Real) {
    model.now += this.ms
    real.now += this.ms
  }
  toString = () => `advance(${this.ms})`
}

class Poll implements fc.AsyncCommand<Model, Real> {
  check = () => true
  async run(model: Model, real: Real) {
    expect(await pollReal(real, real.verifier)).toBe(expectedPoll(model))
  }
  toString = () => 'poll'
}

class PollAfter implements fc.AsyncCommand<Model, Real> {
  constructor(readonly ms: number) {}
  check = () => true
  async run(model: Model, real: Real) {
    model.now += this.ms
    real.now += this.ms
    expect(await pollReal(real, real.verifier)).toBe(expectedPoll(model))
  }
  toString = () => `poll after ${this.ms} ms`
}

class PollWithWrongVerifier implements fc.AsyncCommand<Model, Real> {
  check = () => true
  async run(_model: Model, real: Real) {
    // Changes nothing: not the status, not the polling interval.
    expect(await pollReal(real, pkcePair().verifier)).toBe('invalid_grant')
  }
  toString = () => 'poll(wrong verifier)'
}

class Decide implements fc.AsyncCommand<Model, Real> {
  constructor(readonly decision: 'approve' | 'deny') {}
  check = () => true
  async run(model: Model, real: Real) {
    const expected = expectedVerify(model)
    const store = real.world.state
    const verified = await verifyUserCode({
      userCode: real.userCode,
      attemptKey: 'session',
      now: real.now,
      store,
    })
    expect(verified.ok ? 'ok' : verified.reason).toBe(expected)
    if (!verified.ok) return
    const decided = await decideDeviceAuthorization({
      grantId: verified.grant.grantId,
      userId: 'alice',
      decision: this.decision,
      now: real.now,
      store,
    })
    model.status = this.decision === 'approve' ? 'approved' : 'denied'
    expect(decided).toEqual({ ok: true, status: model.status })
  }
  toString = () => this.decision
}

class EnterWrongUserCode implements fc.AsyncCommand<Model, Real> {
  check = () => true
  async run(model: Model, real: Real) {
    // The right code with its first letter changed: certainly wrong, certainly well formed.
    const first = real.userCode[0]!
    const other = USER_CODE_ALPHABET[(USER_CODE_ALPHABET.indexOf(first) + 1) % USER_CODE_ALPHABET.length]!
    const wrong = other + real.userCode.slice(1)
    const expected =
      failuresNow(model) >= MAX_USER_CODE_FAILURES
        ? 'locked'
        : recordFailure(model) >= MAX_USER_CODE_FAILURES
          ? 'locked'
          : 'invalid_code'
    const result = await verifyUserCode({
      userCode: wrong,
      attemptKey: 'session',
      now: real.now,
      store: real.world.state,
    })
    expect(result.ok ? 'ok' : result.reason).toBe(expected)
  }
  toString = () => 'enter wrong user code'
}

// Gaps around the interval boundaries (5, 10, 15, 20 s), where slow_down flips, are drawn most.
const nearBoundary = fc.constantFrom(0, 1, 4_999, 5_000, 9_999, 10_000, 14_999, 15_000, 19_999, 20_000)
const farAhead = fc.constantFrom(60_000, 300_000, 599_999, 600_000)

const commands = fc.commands(
  [
    nearBoundary.map((ms) => new PollAfter(ms)),
    nearBoundary.map((ms) => new PollAfter(ms)),
    nearBoundary.map((ms) => new PollAfter(ms)),
    nearBoundary.map((ms) => new AdvanceClock(ms)),
    farAhead.map((ms) => new AdvanceClock(ms)),
    fc.constant(new Poll()),
    fc.constant(new PollWithWrongVerifier()),
    fc.constantFrom('approve' as const, 'deny' as const).map((decision) => new Decide(decision)),
    fc.constant(new EnterWrongUserCode()),
  ],
  { maxCommands: 40 },
)

describe('device flow against a model (fast-check)', () => {
  it('answers every sequence of polls, decisions, wrong codes and clock moves as the model does', async () => {
    await fc.assert(
      fc.asyncProperty(commands, async (sequence) => {
        const world = createWorld()
        const { verifier, challenge } = pkcePair()
        const body = await startDeviceAuthorization({
          codeChallenge: challenge,
          codeChallengeMethod: 'S256',
          verificationUri: 'https://auth.example/device',
          now: NOW,
          store: world.state,
        })
        const model: Model = {
          now: NOW,
          status: 'pending',
          interval: 5,
          lastPolledAt: undefined,
          failures: 0,
          failureWindowEnd: 0,
        }
        const real: Real = {
          world,
          deviceCode: body.device_code,
          userCode: body.user_code,
          verifier,
          now: NOW,
        }
        await fc.asyncModelRun(() => ({ model, real }), sequence)
        // Whatever happened, at most one token was issued.
        expect((await world.tokens.listByOwner('alice')).length).toBe(model.status === 'redeemed' ? 1 : 0)
      }),
      { numRuns: 500 },
    )
  })
})
