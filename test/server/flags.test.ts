import { describe, expect, test } from 'vitest'
import { parseCommandLine, parseStore, type ServerFlags } from '../../examples/server/flags.js'
import { parseTrustProxy } from '../../examples/server/http/trust-proxy.js'
import { ConfigError } from '../../src/index.js'

function flagsOf(argv: readonly string[]): ServerFlags {
  const result = parseCommandLine(argv)
  if (result.help) throw new Error('unexpected --help')
  return result.flags
}

function errorOf(run: () => unknown): string {
  try {
    run()
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError)
    return (error as ConfigError).message
  }
  throw new Error('expected a ConfigError')
}

const PREFIX_ZERO =
  'has a prefix of length 0: like "true", it would let any client forge its address; name the proxies: loopback, or addresses/CIDRs separated by commas'

describe('command line', () => {
  test('defaults: fastify on 127.0.0.1:3000, no trusted proxy, memory store, demo seed', () => {
    expect(flagsOf([])).toEqual({
      seed: undefined,
      framework: 'fastify',
      port: 3000,
      host: '127.0.0.1',
      trustProxy: false,
      store: { kind: 'memory' },
      ipv6Prefix: 64,
      maxLiveTokens: 100,
      clientMetadataAllowHttpLoopback: false,
      maxRegisteredClients: 10_000,
    })
  })

  test('every flag, as "--flag value" and "--flag=value"', () => {
    expect(
      flagsOf([
        '--seed',
        'seed.json',
        '--framework=hono',
        '--port',
        '0',
        '--host=::1',
        '--trust-proxy',
        'loopback,10.0.0.0/8',
        '--store=memory',
        '--ipv6-prefix',
        '56',
        '--max-live-tokens=500',
        '--client-metadata-allow-http-loopback',
        '--max-registered-clients',
        '50',
      ]),
    ).toEqual({
      seed: 'seed.json',
      framework: 'hono',
      port: 0,
      host: '::1',
      trustProxy: ['loopback', '10.0.0.0/8'],
      store: { kind: 'memory' },
      ipv6Prefix: 56,
      maxLiveTokens: 500,
      clientMetadataAllowHttpLoopback: true,
      maxRegisteredClients: 50,
    })
  })

  test.each([
    [['--client-metadata-allow-http-loopback=yes'], 'takes no value'],
    [['--client-metadata-allow-http-loopback', '--client-metadata-allow-http-loopback'], 'more than once'],
    [['--max-registered-clients', '0'], 'from 1 to 1000000'],
    [['--max-registered-clients', '1000001'], 'from 1 to 1000000'],
  ])('%j is refused: %s', (argv, message) => {
    expect(() => parseCommandLine(argv)).toThrow(message)
  })

  test('--help wins', () => {
    expect(parseCommandLine(['--port', '1', '--help'])).toEqual({ help: true })
  })

  test.each([
    [['--framework', 'koa'], '--framework: "koa" is not one of express, fastify, hono'],
    [['--port', 'abc'], '--port: "abc" is not a port number from 0 to 65535'],
    [['--port', '65536'], '--port: "65536" is not a port number from 0 to 65535'],
    [['--port', '080'], '--port: "080" is not a port number from 0 to 65535'],
    [['--port'], '--port: needs a value; see --help'],
    [['--port', '--host', 'x'], '--port: needs a value; see --help'],
    [['--port', '1', '--port', '2'], '--port: is given more than once'],
    [['--host', 'bad host'], '--host: "bad host" is not an IP address or host name'],
    [['--colour', 'red'], '"--colour" is not a known flag; see --help'],
    [['seed.json'], '"seed.json" is not a flag; see --help'],
    [['--seed='], '--seed: needs a file name'],
    [
      ['--trust-proxy', 'true'],
      '--trust-proxy: "true" would let any client forge its address; name the proxies: loopback, or addresses/CIDRs separated by commas',
    ],
    [
      ['--trust-proxy', '10.1.2.77/24'],
      '--trust-proxy: "10.1.2.77/24" has host bits set; did you mean 10.1.2.0/24?',
    ],
    [['--trust-proxy', 'loopback,'], '--trust-proxy: "loopback," has an empty entry'],
    ...['0', '129', '064', '-1', '64.5', '/64', ''].map(
      (value) =>
        [
          ['--ipv6-prefix', value],
          `--ipv6-prefix: ${JSON.stringify(value)} is not a prefix length from 1 to 128`,
        ] as const,
    ),
    ...['0', '10001', '012', '-1', '2.5', '1e3', ''].map(
      (value) =>
        [
          ['--max-live-tokens', value],
          `--max-live-tokens: ${JSON.stringify(value)} is not a whole number of tokens from 1 to 10000`,
        ] as const,
    ),
    // A prefix of length 0 is "true" spelt as a CIDR: every IPv4 (or IPv6) peer could forge its address.
    [['--trust-proxy', '0.0.0.0/0,::/0'], `--trust-proxy: "0.0.0.0/0" ${PREFIX_ZERO}`],
    [['--trust-proxy', 'loopback,::/0'], `--trust-proxy: "::/0" ${PREFIX_ZERO}`],
    // The IPv4-mapped spelling of 0.0.0.0/0, which proxy-addr would accept and trust every IPv4 peer.
    [['--trust-proxy', '::ffff:0.0.0.0/96'], `--trust-proxy: "::ffff:0.0.0.0/96" ${PREFIX_ZERO}`],
    [
      ['--store', 'postgres://db'],
      '--store: "postgres://db" is not memory, a redis://HOST:PORT URL or a redis-cluster://HOST:PORT[,HOST:PORT…] list',
    ],
    [
      ['--store', 'redis://cache'],
      '--store: "redis://cache" is not memory, a redis://HOST:PORT URL or a redis-cluster://HOST:PORT[,HOST:PORT…] list',
    ],
    [
      ['--store', 'redis://cache:6379/0'],
      '--store: "redis://cache:6379/0" is not memory, a redis://HOST:PORT URL or a redis-cluster://HOST:PORT[,HOST:PORT…] list',
    ],
  ] as const)('%j → %s', (argv, line) => {
    expect(errorOf(() => parseCommandLine(argv))).toBe(line)
  })

  test('--trust-proxy: false, loopback, addresses and CIDRs', () => {
    expect(parseTrustProxy('false')).toBe(false)
    expect(parseTrustProxy('loopback')).toEqual(['loopback'])
    expect(parseTrustProxy('127.0.0.1,::1,10.0.0.0/8')).toEqual(['127.0.0.1', '::1', '10.0.0.0/8'])
    expect(errorOf(() => parseTrustProxy('010.0.0.1'))).toMatch(/^--trust-proxy: "010\.0\.0\.1" /)
  })

  test('--store: a redis URL is validated and normalised', () => {
    expect(parseStore('redis://127.0.0.1:6379')).toEqual({ kind: 'redis', url: 'redis://127.0.0.1:6379' })
    expect(parseStore('redis://cache.internal:6380/')).toEqual({
      kind: 'redis',
      url: 'redis://cache.internal:6380',
    })
    expect(parseStore('memory')).toEqual({ kind: 'memory' })
  })

  test('--store: a redis-cluster list of seed nodes is validated and normalised', () => {
    expect(parseStore('redis-cluster://10.0.0.1:7000,cache-2.internal:7001/')).toEqual({
      kind: 'redis-cluster',
      url: 'redis-cluster://10.0.0.1:7000,cache-2.internal:7001',
    })
    expect(parseStore('redis-cluster://[::1]:7000')).toEqual({
      kind: 'redis-cluster',
      url: 'redis-cluster://[::1]:7000',
    })
    for (const bad of [
      'redis-cluster://',
      'redis-cluster://10.0.0.1',
      'redis-cluster://10.0.0.1:7000,',
      'redis-cluster://10.0.0.1:0',
      'redis-cluster://10.0.0.1:70000',
      'redis-cluster://user:pw@10.0.0.1:7000',
      'redis-cluster://10.0.0.1:7000/0',
      'redis-cluster:10.0.0.1:7000',
    ]) {
      expect(errorOf(() => parseStore(bad))).toBe(
        `--store: ${JSON.stringify(bad)} is not memory, a redis://HOST:PORT URL or a redis-cluster://HOST:PORT[,HOST:PORT…] list`,
      )
    }
  })
})
