import { describe, expect, test, vi } from 'vitest'
import {
  compileTrustProxy,
  forwardedProtocol,
  resolveForwarded,
  strictProtocol,
  type TrustFunction,
  type TrustProxy,
} from '../../src/authentication/trusted-proxies.js'
import { ConfigError } from '../../src/errors.js'

describe('compileTrustProxy', () => {
  test.each<[string, TrustProxy | undefined, string, boolean]>([
    ['undefined trusts nobody', undefined, '127.0.0.1', false],
    ['false trusts nobody', false, '127.0.0.1', false],
    ['true trusts everybody', true, '203.0.113.7', true],
    ['loopback trusts 127.0.0.1', 'loopback', '127.0.0.1', true],
    ['loopback trusts ::1', 'loopback', '::1', true],
    ['loopback does not trust 10.0.0.1', 'loopback', '10.0.0.1', false],
    ['a comma-separated list', '10.0.0.0/8, 127.0.0.1', '10.2.3.4', true],
    ['a list', ['192.0.2.1'], '192.0.2.1', true],
    ['an IPv4-mapped peer', '127.0.0.1', '::ffff:127.0.0.1', true],
    ['a garbage peer', 'loopback', 'garbage', false],
  ])('%s', (_name, value, address, expected) => {
    expect(compileTrustProxy(value)(address, 0)).toBe(expected)
  })

  test.each<[string, unknown, RegExp]>([
    ['an unknown name', 'localhost', /"localhost"/],
    ['a bad CIDR', '10.0.0.0/33', /"10\.0\.0\.0\/33"/],
    ['a prefix past 32', '1.2.3.4/33', /"1\.2\.3\.4\/33"/],
    ['a leading zero', '010.0.0.1', /"010\.0\.0\.1"/],
    ['host bits set', '10.0.0.1/8', /"10\.0\.0\.1\/8".*10\.0\.0\.0\/8/],
    ['not an address', 'not-an-ip', /"not-an-ip"/],
    ['an empty entry', '10.0.0.1,', /empty entry/],
    ['every IPv4 peer', '0.0.0.0/0', /"0\.0\.0\.0\/0" has a prefix of length 0/],
    ['every IPv6 peer', ['::/0'], /"::\/0" has a prefix of length 0/],
    ['every IPv4 peer, mapped', '::ffff:0.0.0.0/96', /prefix of length 0/],
    ['a number', 1, /must be a boolean/],
    ['a list with a number', ['10.0.0.1', 2], /must be a boolean/],
  ])('rejects %s when compiled, naming trustProxy and quoting the value', (_name, value, message) => {
    const compile = () => compileTrustProxy(value as TrustProxy)
    expect(compile).toThrow(ConfigError)
    expect(compile).toThrow(/^trustProxy: /)
    expect(compile).toThrow(message)
  })

  test("the error's cause keeps the position of the entry in the list", () => {
    let thrown: unknown
    try {
      compileTrustProxy('10.0.0.1, 010.0.0.1')
    } catch (error) {
      thrown = error
    }
    expect(thrown).toBeInstanceOf(ConfigError)
    expect((thrown as ConfigError).path).toEqual(['trustProxy'])
    expect((thrown as ConfigError).cause).toBeInstanceOf(ConfigError)
    expect(((thrown as ConfigError).cause as ConfigError).path).toEqual(['trustProxy', 1])
  })

  test('names the option it was given', () => {
    expect(() => compileTrustProxy('010.0.0.1', ['--trust-proxy'])).toThrow(/^--trust-proxy/)
  })

  test.each([['10.0.0.0/8'], ['::1'], ['loopback'], ['linklocal'], ['uniquelocal'], ['::ffff:10.0.0.0/104']])(
    'accepts %s',
    (value) => {
      expect(() => compileTrustProxy(value)).not.toThrow()
    },
  )

  test('the named ranges match what Express means by them', () => {
    expect(compileTrustProxy('linklocal')('169.254.1.2', 0)).toBe(true)
    expect(compileTrustProxy('linklocal')('fe80::1', 0)).toBe(true)
    expect(compileTrustProxy('uniquelocal')('172.16.0.1', 0)).toBe(true)
    expect(compileTrustProxy('uniquelocal')('192.168.1.1', 0)).toBe(true)
    expect(compileTrustProxy('uniquelocal')('fd00::1', 0)).toBe(true)
    expect(compileTrustProxy('uniquelocal')('172.32.0.1', 0)).toBe(false)
  })
})

describe('resolveForwarded', () => {
  // Compiled inside each test: a throw while the file is collected would fail no test at all.
  const resolve = (peerAddress: string | undefined, forwardedFor?: string, forwardedProto?: string) =>
    resolveForwarded(compileTrustProxy('127.0.0.1'), {
      peerAddress,
      directProtocol: 'http',
      forwardedFor,
      forwardedProto,
    })

  test.each([
    ['no headers', '127.0.0.1', undefined, undefined, { clientAddress: '127.0.0.1', protocol: 'http' }],
    [
      'a trusted proxy',
      '127.0.0.1',
      '203.0.113.7',
      'https',
      { clientAddress: '203.0.113.7', protocol: 'https' },
    ],
    [
      'trusted hops',
      '127.0.0.1',
      '203.0.113.7, 127.0.0.1',
      undefined,
      { clientAddress: '203.0.113.7', protocol: 'http' },
    ],
    [
      'an untrusted hop stops the walk',
      '127.0.0.1',
      '10.1.2.3, 198.51.100.9',
      undefined,
      { clientAddress: '198.51.100.9', protocol: 'http' },
    ],
    [
      'a garbage entry stops the walk',
      '127.0.0.1',
      '10.1.2.3, garbage',
      undefined,
      { clientAddress: 'garbage', protocol: 'http' },
    ],
    [
      'an untrusted peer',
      '198.51.100.9',
      '10.1.2.3',
      'https',
      { clientAddress: '198.51.100.9', protocol: 'http' },
    ],
    [
      'an empty X-Forwarded-Proto',
      '127.0.0.1',
      undefined,
      '',
      { clientAddress: '127.0.0.1', protocol: 'http' },
    ],
    ['no peer address', undefined, '10.1.2.3', 'https', { clientAddress: undefined, protocol: 'http' }],
    [
      'a trusted proxy that sends only X-Forwarded-Proto',
      '127.0.0.1',
      undefined,
      'https',
      { clientAddress: '127.0.0.1', protocol: 'https' },
    ],
    [
      'an untrusted peer that sends only X-Forwarded-Proto',
      '198.51.100.9',
      undefined,
      'https',
      { clientAddress: '198.51.100.9', protocol: 'http' },
    ],
    [
      'empty entries and spaces, as Express reads them',
      '127.0.0.1',
      ' 198.51.100.9 ,, 127.0.0.1 ',
      undefined,
      { clientAddress: '198.51.100.9', protocol: 'http' },
    ],
  ])('%s', (_name, peer, forwardedFor, forwardedProto, expected) => {
    expect(resolve(peer, forwardedFor, forwardedProto)).toEqual(expected)
  })
})

describe('resolveForwarded with other trust functions', () => {
  const origin = (trust: TrustFunction, forwardedFor: string) =>
    resolveForwarded(trust, {
      peerAddress: '127.0.0.1',
      directProtocol: 'http',
      forwardedFor,
      forwardedProto: undefined,
    })

  test('trusting every hop, the client is the leftmost entry', () => {
    expect(origin(compileTrustProxy(true), '203.0.113.7, 10.0.0.2, 10.0.0.1').clientAddress).toBe(
      '203.0.113.7',
    )
  })

  // Issue 27: Hono's getConnInfo may give no address. An unknown peer vouches for nothing, even
  // when every peer is trusted: the headers are the connection's word, and it has none to give.
  test("trusting every peer, a request without a peer address keeps the connection's answer", () => {
    const trust = vi.fn(compileTrustProxy(true))
    expect(
      resolveForwarded(trust, {
        peerAddress: undefined,
        directProtocol: 'http',
        forwardedFor: '203.0.113.7',
        forwardedProto: 'https',
      }),
    ).toEqual({ clientAddress: undefined, protocol: 'http' })
    expect(trust).not.toHaveBeenCalled()
  })

  test('numbers the hops from the peer outwards, as Express does', () => {
    const hops: [string, number][] = []
    const twoHops: TrustFunction = (address, hop) => {
      hops.push([address, hop])
      return hop < 2
    }
    expect(origin(twoHops, '203.0.113.7, 10.0.0.2, 10.0.0.1').clientAddress).toBe('10.0.0.2')
    expect(hops).toEqual([
      ['127.0.0.1', 0],
      ['10.0.0.1', 1],
      ['10.0.0.2', 2],
    ])
  })
})

describe('forwardedProtocol and strictProtocol', () => {
  test.each([
    ['https', 'https'],
    [' HTTPS ', 'https'],
    ['https,https', 'https'],
    ['https, http', 'http'],
    ['http, https', 'http'],
    ['http', 'http'],
    ['wss', 'http'],
  ])('forwardedProtocol(%j) → %s', (header, expected) => {
    expect(forwardedProtocol(header)).toBe(expected)
  })

  test.each<[string, string, boolean, string | undefined, string]>([
    ['keeps http', 'http', false, 'https', 'http'],
    ['keeps https without a header', 'https', false, undefined, 'https'],
    ['keeps a TLS socket', 'https', true, 'http, https', 'https'],
    ['re-reads a multi-hop header', 'https', false, 'https, http', 'http'],
    ['accepts every hop on https', 'https', false, 'https, https', 'https'],
    ['lower-cases the scheme', 'HTTPS', false, undefined, 'https'],
  ])('strictProtocol %s', (_name, protocol, encrypted, header, expected) => {
    expect(strictProtocol(protocol, encrypted, header)).toBe(expected)
  })
})
