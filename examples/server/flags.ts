/**
 * The command line of the reference server (README.md, "Flags"). Every problem is a {@link ConfigError}
 * naming the flag and quoting the value, which main.ts prints as one line before exiting with 2.
 */

import { isIP } from 'node:net'
import { ConfigError, MAX_TOKEN_LIFETIME_DAYS } from 'data-access-policy'
import { parseRedisClusterUrl as parseClusterUrl } from 'data-access-policy/redis'
import { parseTrustProxy, type TrustProxy } from './http/trust-proxy.js'
import { DEFAULT_MAX_LIVE_TOKENS, MAX_LIVE_TOKENS_LIMIT } from './limits/abuse-limits.js'
import { DEFAULT_IPV6_PREFIX } from './limits/networks.js'
import { DEFAULT_MAX_REGISTERED_CLIENTS } from './oauth/registrations.js'
import { parsePublicUrl } from './public-origin.js'
import { quote } from './seed/messages.js'

/** The frameworks the server runs on. */
export const FRAMEWORKS = ['express', 'fastify', 'hono'] as const
export type Framework = (typeof FRAMEWORKS)[number]

/** Where tokens and OAuth state live: process memory, or a Redis server several instances share. */
export type StoreOption =
  | { readonly kind: 'memory' }
  | { readonly kind: 'redis'; readonly url: string }
  | { readonly kind: 'redis-cluster'; readonly url: string }

/** The server's options, as the flags give them. */
export interface ServerFlags {
  /** A seed file; absent: the embedded demo seed. */
  readonly seed: string | undefined
  readonly framework: Framework
  readonly port: number
  readonly host: string
  readonly trustProxy: TrustProxy
  readonly store: StoreOption
  /** `--public-url`, without a trailing slash; absent: the listening address. */
  readonly publicUrl: string | undefined
  /** `--ipv6-prefix`: IPv6 clients share the abuse limits per network of this many bits. */
  readonly ipv6Prefix: number
  /** `--max-token-lifetime`: the longest lifetime of a new or regenerated API token, in days; absent: no cap. */
  readonly maxTokenLifetimeDays: number | undefined
  /** `--max-live-tokens`: the live (unrevoked, unexpired) API tokens one user may hold at once. */
  readonly maxLiveTokens: number
  /** `--secret-scanning-keys`: the file of public keys leak reports are verified with; absent: no leak endpoint. */
  readonly secretScanningKeys: string | undefined
  /** `--client-metadata-allow-http-loopback`: fetch client metadata documents from http://127.0.0.1 and [::1] (dev only). */
  readonly clientMetadataAllowHttpLoopback: boolean
  /** `--max-registered-clients`: dynamically registered clients kept at most. */
  readonly maxRegisteredClients: number
}

/** What the command line asks for. */
export type CommandLine = { readonly help: true } | { readonly help: false; readonly flags: ServerFlags }

/** The `--help` text. */
export const USAGE = `Usage: npm start -- [options]

Runs the reference data-access server on the embedded demo seed or a seed file.

Options:
  --seed FILE             JSON seed (users, organizations, datasets, workflows, tokens, clients);
                          default: the embedded demo seed, whose tokens are printed on start
  --framework NAME        express | fastify | hono (default fastify)
  --port N                port to listen on (default 3000; 0 picks a free one)
  --host H                address to listen on (default 127.0.0.1)
  --trust-proxy VALUE     peers allowed to set X-Forwarded-For / X-Forwarded-Proto: false (default),
                          loopback, or addresses/CIDRs separated by commas
  --store STORE           memory (default) | redis://HOST:PORT | redis-cluster://HOST:PORT[,…]:
                          tokens, OAuth state and sign-in sessions on a Redis server or
                          cluster that several instances share (seed tokens added once)
  --public-url URL        the origin clients see (https://data.example.org): OAuth metadata's
                          issuer and the device flow's verification_uri derive from it;
                          default: the listening address, never the Host header
  --ipv6-prefix N         IPv6 clients share the abuse limits per network of N bits, 1 to 128
                          (default 64: one customer's /64); IPv4 clients count per address
  --max-token-lifetime DAYS
                          cap on API token lifetimes, 1-36500 days: the settings pages offer
                          nothing longer and no "no expiry"; default: no cap
  --max-live-tokens N     live API tokens one user may hold at once, 1-${MAX_LIVE_TOKENS_LIMIT}
                          (default ${DEFAULT_MAX_LIVE_TOKENS}): creating one more is refused until one is revoked
  --secret-scanning-keys FILE
                          public keys (GitHub's secret-scanning public-keys JSON) that sign leak
                          reports to POST /secret-scanning/report; default: no leak endpoint
  --max-registered-clients N
                          dynamically registered OAuth clients kept at most, 1-1000000
                          (default ${DEFAULT_MAX_REGISTERED_CLIENTS}); when full, the oldest never used
                          for 10 minutes goes first, a used one never (429)
  --client-metadata-allow-http-loopback
                          (takes no value) also fetch client ID metadata documents from
                          http://127.0.0.1:PORT/… and http://[::1]:PORT/…: development and tests only
  --help                  show this text

Plain HTTP is refused (403) from non-loopback clients: deploy behind a TLS-terminating proxy
and name it with --trust-proxy.`

const DEFAULTS: ServerFlags = {
  seed: undefined,
  framework: 'fastify',
  port: 3000,
  host: '127.0.0.1',
  trustProxy: false,
  store: { kind: 'memory' },
  publicUrl: undefined,
  ipv6Prefix: DEFAULT_IPV6_PREFIX,
  maxTokenLifetimeDays: undefined,
  maxLiveTokens: DEFAULT_MAX_LIVE_TOKENS,
  secretScanningKeys: undefined,
  clientMetadataAllowHttpLoopback: false,
  maxRegisteredClients: DEFAULT_MAX_REGISTERED_CLIENTS,
}

// Flags that take no value: present means on.
const SWITCHES: Readonly<Record<string, Partial<ServerFlags>>> = {
  '--client-metadata-allow-http-loopback': { clientMetadataAllowHttpLoopback: true },
}

const HOSTNAME =
  /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/

type Parser = (value: string) => Partial<ServerFlags>

const PARSERS: Readonly<Record<string, Parser>> = {
  '--seed': (value) => {
    if (value === '') throw new ConfigError(['--seed'], 'needs a file name')
    return { seed: value }
  },
  '--framework': (value) => {
    const framework = FRAMEWORKS.find((each) => each === value)
    if (framework === undefined) {
      throw new ConfigError(['--framework'], `${quote(value)} is not one of ${FRAMEWORKS.join(', ')}`)
    }
    return { framework }
  },
  '--port': (value) => {
    if (!/^(0|[1-9][0-9]{0,4})$/.test(value) || Number(value) > 65_535) {
      throw new ConfigError(['--port'], `${quote(value)} is not a port number from 0 to 65535`)
    }
    return { port: Number(value) }
  },
  '--host': (value) => {
    if (isIP(value) === 0 && !HOSTNAME.test(value)) {
      throw new ConfigError(['--host'], `${quote(value)} is not an IP address or host name`)
    }
    return { host: value }
  },
  '--trust-proxy': (value) => ({ trustProxy: parseTrustProxy(value) }),
  '--store': (value) => ({ store: parseStore(value) }),
  '--public-url': (value) => ({ publicUrl: parsePublicUrl(value) }),
  '--ipv6-prefix': (value) => {
    if (!/^[1-9][0-9]{0,2}$/.test(value) || Number(value) > 128) {
      throw new ConfigError(['--ipv6-prefix'], `${quote(value)} is not a prefix length from 1 to 128`)
    }
    return { ipv6Prefix: Number(value) }
  },
  '--max-token-lifetime': (value) => {
    if (!/^[1-9][0-9]{0,4}$/.test(value) || Number(value) > MAX_TOKEN_LIFETIME_DAYS) {
      throw new ConfigError(
        ['--max-token-lifetime'],
        `${quote(value)} is not a whole number of days from 1 to ${MAX_TOKEN_LIFETIME_DAYS}`,
      )
    }
    return { maxTokenLifetimeDays: Number(value) }
  },
  '--max-live-tokens': (value) => {
    if (!/^[1-9][0-9]{0,4}$/.test(value) || Number(value) > MAX_LIVE_TOKENS_LIMIT) {
      throw new ConfigError(
        ['--max-live-tokens'],
        `${quote(value)} is not a whole number of tokens from 1 to ${MAX_LIVE_TOKENS_LIMIT}`,
      )
    }
    return { maxLiveTokens: Number(value) }
  },
  '--max-registered-clients': (value) => {
    if (!/^[1-9][0-9]{0,6}$/.test(value) || Number(value) > 1_000_000) {
      throw new ConfigError(
        ['--max-registered-clients'],
        `${quote(value)} is not a whole number of clients from 1 to 1000000`,
      )
    }
    return { maxRegisteredClients: Number(value) }
  },
  '--secret-scanning-keys': (value) => {
    if (value === '') throw new ConfigError(['--secret-scanning-keys'], 'needs a file name')
    return { secretScanningKeys: value }
  },
}

/**
 * Parses `--store`: `memory`, `redis://HOST:PORT` (an optional trailing `/`), or the seed nodes
 * of a Redis Cluster, `redis-cluster://HOST:PORT[,HOST:PORT…]`.
 *
 * @example
 * parseStore('redis://127.0.0.1:6379') // { kind: 'redis', url: 'redis://127.0.0.1:6379' }
 * parseStore('redis-cluster://10.0.0.1:7000,10.0.0.2:7000') // { kind: 'redis-cluster', url: … }
 */
export function parseStore(value: string): StoreOption {
  if (value === 'memory') return { kind: 'memory' }
  const bad = () =>
    new ConfigError(
      ['--store'],
      `${quote(value)} is not memory, a redis://HOST:PORT URL or a redis-cluster://HOST:PORT[,HOST:PORT…] list`,
    )
  if (value.startsWith('redis-cluster:')) {
    const seeds = parseClusterUrl(value)
    if (seeds === undefined) throw bad()
    const nodes = seeds.map(({ host, port }) => `${host.includes(':') ? `[${host}]` : host}:${port}`)
    return { kind: 'redis-cluster', url: `redis-cluster://${nodes.join(',')}` }
  }
  if (!value.startsWith('redis://') || !URL.canParse(value)) throw bad()
  const url = new URL(value)
  const port = /:(\d{1,5})\/?$/.exec(value)?.[1]
  if (
    url.hostname === '' ||
    url.username !== '' ||
    url.password !== '' ||
    url.search !== '' ||
    url.hash !== '' ||
    (url.pathname !== '' && url.pathname !== '/') ||
    port === undefined ||
    Number(port) < 1 ||
    Number(port) > 65_535
  ) {
    throw bad()
  }
  return { kind: 'redis', url: `redis://${url.host}` }
}

/**
 * Parses the command line (the arguments after the script). Flags take their value as the next
 * argument or after `=`; each may be given once.
 *
 * @throws {ConfigError} naming the flag and quoting the bad value.
 * @example
 * parseCommandLine(['--framework', 'hono', '--port=0'])
 */
export function parseCommandLine(argv: readonly string[]): CommandLine {
  let flags: ServerFlags = DEFAULTS
  const seen = new Set<string>()
  for (let i = 0; i < argv.length; i++) {
    const argument = argv[i]!
    if (argument === '--help' || argument === '-h') return { help: true }
    const equals = argument.indexOf('=')
    const name = argument.startsWith('--') && equals !== -1 ? argument.slice(0, equals) : argument
    if (Object.hasOwn(SWITCHES, name)) {
      if (name !== argument) throw new ConfigError([name], 'takes no value')
      if (seen.has(name)) throw new ConfigError([name], 'is given more than once')
      seen.add(name)
      flags = { ...flags, ...SWITCHES[name] }
      continue
    }
    const parse = Object.hasOwn(PARSERS, name) ? PARSERS[name] : undefined
    if (parse === undefined) {
      const detail = argument.startsWith('-')
        ? 'is not a known flag; see --help'
        : 'is not a flag; see --help'
      throw new ConfigError([], `${quote(argument)} ${detail}`)
    }
    if (seen.has(name)) throw new ConfigError([name], 'is given more than once')
    seen.add(name)
    let value: string | undefined
    if (equals !== -1 && name !== argument) {
      value = argument.slice(equals + 1)
    } else {
      value = argv[i + 1]
      if (value === undefined || (value.startsWith('--') && value.length > 2)) {
        throw new ConfigError([name], 'needs a value; see --help')
      }
      i++
    }
    flags = { ...flags, ...parse(value) }
  }
  return { help: false, flags }
}
