import { describe, expect, test } from 'vitest'
import { quoteHeaderValue, renderDenial, wwwAuthenticate } from '../../src/authentication/http-denial.js'
import {
  DENY_STATUS,
  type DenyCode,
  deny,
  rateLimited,
  STATUS_MESSAGES,
} from '../../src/decisions/decision.js'

describe('renderDenial', () => {
  test.each([
    ['invalid_request', 400, 'Bad request', 'Bearer realm="data-api", error="invalid_request"'],
    ['missing_token', 401, 'Invalid credentials', 'Bearer realm="data-api"'],
    ['invalid_token', 401, 'Invalid credentials', 'Bearer realm="data-api", error="invalid_token"'],
    ['https_required', 403, 'Not authorized', undefined],
    ['insufficient_access', 403, 'Not authorized', undefined],
    ['export_restricted', 403, 'Not authorized', undefined],
    ['invalid_input', 403, 'Not authorized', undefined],
    ['not_found', 404, 'Not found', undefined],
    ['rate_limited', 429, 'Too many requests', undefined],
    ['service_unavailable', 503, 'Service unavailable', undefined],
  ] as const)('%s → %i %s, WWW-Authenticate %j', (code, status, message, challenge) => {
    const rendered = renderDenial(deny(code), 'data-api')
    expect(rendered.status).toBe(status)
    expect(JSON.parse(rendered.body)).toEqual({ error: { status, message, code } })
    expect(rendered.headers['www-authenticate']).toBe(challenge)
    expect(rendered.headers['content-type']).toBe('application/json; charset=utf-8')
    // A denial without a challenge sends no WWW-Authenticate at all, not an empty one.
    expect(Object.keys(rendered.headers).sort()).toEqual(
      challenge === undefined ? ['content-type'] : ['content-type', 'www-authenticate'],
    )
  })

  test('rate_limited carries Retry-After in whole seconds, and no challenge', () => {
    const rendered = renderDenial(rateLimited(12), 'data-api', 'https://rs.example/.well-known/x')
    expect(rendered.status).toBe(429)
    expect(rendered.headers).toEqual({
      'content-type': 'application/json; charset=utf-8',
      'retry-after': '12',
    })
    expect(JSON.parse(rendered.body)).toEqual({
      error: { status: 429, message: 'Too many requests', code: 'rate_limited' },
    })
  })

  test.each([
    [12, 12],
    [0.2, 1],
    [12.01, 13],
    [0, 1],
    [-5, 1],
    [3600, 3600],
    [99_999, 3600],
    [Number.NaN, 1],
    [Number.POSITIVE_INFINITY, 1],
  ])('rateLimited(%s) says Retry-After %s, one shared value per second', (seconds, expected) => {
    expect(rateLimited(seconds).retryAfter).toBe(expected)
    expect(rateLimited(seconds)).toBe(rateLimited(expected))
    expect(Object.isFrozen(rateLimited(seconds))).toBe(true)
  })

  test('insufficient_scope without a scope still challenges, naming no scope', () => {
    const rendered = renderDenial(deny('insufficient_scope'), 'data-api')
    expect(rendered.status).toBe(403)
    expect(rendered.headers['www-authenticate']).toBe('Bearer error="insufficient_scope"')
  })

  test('insufficient_scope names the scope that would have sufficed', () => {
    const rendered = renderDenial(deny('insufficient_scope', 'data.metadata'), 'data-api')
    expect(rendered.status).toBe(403)
    expect(rendered.headers['www-authenticate']).toBe(
      'Bearer error="insufficient_scope", scope="data.metadata"',
    )
    expect(rendered.body).toBe(
      '{"error":{"status":403,"message":"Not authorized","code":"insufficient_scope"}}',
    )
  })

  test('every code has a status and every status one message', () => {
    for (const code of Object.keys(DENY_STATUS) as DenyCode[]) {
      expect(deny(code).message).toBe(STATUS_MESSAGES[DENY_STATUS[code]])
    }
  })
})

describe('resource_metadata (RFC 9728 §5.1)', () => {
  const URL_ = 'https://data.example.org/.well-known/oauth-protected-resource/api/v1'

  test.each([
    ['missing_token', `Bearer realm="data-api", resource_metadata="${URL_}"`],
    ['invalid_token', `Bearer realm="data-api", error="invalid_token", resource_metadata="${URL_}"`],
    ['invalid_request', 'Bearer realm="data-api", error="invalid_request"'],
    ['insufficient_scope', 'Bearer error="insufficient_scope"'],
    ['not_found', undefined],
  ] as const)('%s → %j', (code, challenge) => {
    expect(wwwAuthenticate(deny(code), 'data-api', URL_)).toBe(challenge)
    expect(renderDenial(deny(code), 'data-api', URL_).headers['www-authenticate']).toBe(challenge)
  })

  test('absent, the challenges are as without it', () => {
    for (const code of ['missing_token', 'invalid_token'] as const) {
      expect(wwwAuthenticate(deny(code), 'data-api', undefined)).toBe(wwwAuthenticate(deny(code), 'data-api'))
    }
  })
})

describe('quoting (RFC 6750 §3)', () => {
  test.each([
    ['data-api', '"data-api"'],
    ['say "hi"', '"say \\"hi\\""'],
    ['back\\slash', '"back\\\\slash"'],
  ])('%j → %s', (value, quoted) => {
    expect(quoteHeaderValue(value)).toBe(quoted)
  })

  test('a realm with quotes is escaped in the challenge', () => {
    expect(wwwAuthenticate(deny('missing_token'), 'a"b\\c')).toBe('Bearer realm="a\\"b\\\\c"')
  })
})
