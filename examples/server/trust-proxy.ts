/**
 * The `--trust-proxy` value: which peers may set `X-Forwarded-For` / `X-Forwarded-Proto`. One
 * meaning on all three frameworks: `false` trusts nobody; otherwise a list of `loopback` and
 * addresses/CIDRs, handed to Express's `trust proxy`, Fastify's `trustProxy` and the Hono adapter's
 * `trustProxy`, which all read it with `proxy-addr`. Entries are validated with the library's
 * strict address parser first, so `10.1.2.77/24` or `010.0.0.1` are refused, not guessed at.
 */
import { ConfigError, compileExportRestrictions } from '../../src/index.js'
import { quote } from './seed-schema.js'

/** Nobody is trusted, or these peers are. */
export type TrustProxy = false | readonly string[]

// proxy-addr's named ranges; only `loopback` is documented, the others are accepted for parity.
const NAMED = new Set(['loopback', 'linklocal', 'uniquelocal'])

/**
 * Parses the flag's value.
 *
 * @throws {ConfigError} naming `--trust-proxy` and quoting the bad entry.
 * @example
 * parseTrustProxy('loopback')                 // ['loopback']
 * parseTrustProxy('127.0.0.1,10.0.0.0/8')     // ['127.0.0.1', '10.0.0.0/8']
 */
export function parseTrustProxy(value: string): TrustProxy {
  if (value === 'false') return false
  if (value === 'true') {
    throw new ConfigError(
      ['--trust-proxy'],
      '"true" would let any client forge its address; name the proxies: loopback, or addresses/CIDRs separated by commas',
    )
  }
  const entries = value.split(',')
  const addresses: string[] = []
  for (const entry of entries) {
    if (entry === '') throw new ConfigError(['--trust-proxy'], `${quote(value)} has an empty entry`)
    if (!NAMED.has(entry)) addresses.push(entry)
  }
  try {
    compileExportRestrictions({ allowedIps: addresses })
  } catch (error) {
    // The detail already quotes the entry and says what is wrong with it.
    if (error instanceof ConfigError) throw new ConfigError(['--trust-proxy'], error.detail, { cause: error })
    throw error
  }
  return Object.freeze(entries)
}
