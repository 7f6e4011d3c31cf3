import { describe, expect, it } from 'vitest'
import { InvalidArgumentError } from '../../src/errors.js'
import { buildRedirectUrl } from '../../src/oauth/build-redirect-url.js'

describe('buildRedirectUrl (RFC 6749 §3.1.2, §4.1.2)', () => {
  it.each([
    ['a URI without a query', 'https://app.example/cb', { code: 'abc' }, 'https://app.example/cb?code=abc'],
    [
      'a URI with a query, which is retained',
      'https://app.example/cb?tenant=7',
      { code: 'abc', state: 's' },
      'https://app.example/cb?tenant=7&code=abc&state=s',
    ],
    ['a URI ending in ?', 'https://app.example/cb?', { code: 'abc' }, 'https://app.example/cb?code=abc'],
    [
      'a URI ending in &',
      'https://app.example/cb?a=1&',
      { code: 'abc' },
      'https://app.example/cb?a=1&code=abc',
    ],
    [
      'undefined values, left out',
      'http://127.0.0.1:1/cb',
      { code: 'abc', state: undefined },
      'http://127.0.0.1:1/cb?code=abc',
    ],
    ['no values at all', 'https://app.example/cb?x=1', {}, 'https://app.example/cb?x=1'],
    [
      'values that need encoding',
      'https://app.example/cb',
      { state: 'a b&c=d/é', error_description: "it's +" },
      'https://app.example/cb?state=a+b%26c%3Dd%2F%C3%A9&error_description=it%27s+%2B',
    ],
  ])('adds parameters to %s', (_name, uri, params, expected) => {
    expect(buildRedirectUrl(uri, params)).toBe(expected)
  })

  it('round-trips through the WHATWG URL parser', () => {
    const location = buildRedirectUrl('https://app.example/cb?tenant=7', { state: 'a b&c=d', code: 'x' })
    const url = new URL(location)
    expect(url.searchParams.get('tenant')).toBe('7')
    expect(url.searchParams.get('state')).toBe('a b&c=d')
    expect(url.searchParams.get('code')).toBe('x')
  })

  it('refuses a redirect URI with a fragment', () => {
    expect(() => buildRedirectUrl('https://app.example/cb#x', { code: 'abc' })).toThrow(InvalidArgumentError)
  })
})
