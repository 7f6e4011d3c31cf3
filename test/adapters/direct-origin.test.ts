import { describe, expect, test } from 'vitest'
import { directOrigin } from '../../adapters/shared/direct-origin.js'

describe('directOrigin: a request without forwarding headers is the connection', () => {
  const plain = { remoteAddress: '198.51.100.9' }
  const tls = { remoteAddress: '2001:db8::1', encrypted: true }

  test.each([
    ['plain HTTP', {}, plain, { clientAddress: '198.51.100.9', protocol: 'http' }],
    ['TLS', {}, tls, { clientAddress: '2001:db8::1', protocol: 'https' }],
    // Only `true` is TLS: a truthy look-alike on a socket-shaped object is not.
    [
      'an `encrypted` that is not true',
      {},
      { remoteAddress: '::1', encrypted: 'yes' },
      {
        clientAddress: '::1',
        protocol: 'http',
      },
    ],
    ['a socket that lost its address', {}, {}, { clientAddress: undefined, protocol: 'http' }],
    // Other headers change nothing.
    [
      'a Forwarded header',
      { forwarded: 'for=203.0.113.7' },
      plain,
      {
        clientAddress: '198.51.100.9',
        protocol: 'http',
      },
    ],
  ])('%s', (_name, headers, socket, expected) => {
    expect(directOrigin({ headers, socket })).toEqual(expected)
  })

  // With a forwarding header the framework's trust setting decides: nothing is answered here.
  test.each([
    ['X-Forwarded-For', { 'x-forwarded-for': '203.0.113.7' }],
    ['X-Forwarded-Proto', { 'x-forwarded-proto': 'https' }],
    ['an empty X-Forwarded-For', { 'x-forwarded-for': '' }],
    ['both', { 'x-forwarded-for': '203.0.113.7', 'x-forwarded-proto': 'https' }],
  ])('%s present: left to the framework', (_name, headers) => {
    expect(directOrigin({ headers, socket: tls })).toBeUndefined()
  })

  test('no socket: left to the framework', () => {
    expect(directOrigin({ headers: {}, socket: null })).toBeUndefined()
  })
})
