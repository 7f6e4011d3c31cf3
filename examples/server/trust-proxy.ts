/**
 * The `--trust-proxy` value: which peers may set `X-Forwarded-For` / `X-Forwarded-Proto`. One
 * meaning on all three frameworks: `false` trusts nobody; otherwise a list of `loopback` and
 * addresses/CIDRs, handed to Express's `trust proxy`, Fastify's `trustProxy` and the Hono adapter's
 * `trustProxy`, which all read it with `proxy-addr`. Entries are validated with the library's
 * strict address parser first, so `10.1.2.77/24` or `010.0.0.1` are refused, not guessed at; and a
 * prefix of length 0 (`0.0.0.0/0`, `::/0`, `::ffff:0.0.0.0/96`) is refused like `true`, which it is.
 */
import { ConfigError, compileExportRestrictions } from '../../src/index.js'
import { parseAddressRule } from '../../src/restrictions/ip-address.js'
import { quote } from './seed-messages.js'

/** Nobody is trusted, or these peers are. */
export type TrustProxy = false | readonly string[]

// proxy-addr's named ranges; only `loopback` is documented, the others are accepted for parity.
const NAMED = new Set(['loopback', 'linklocal', 'uniquelocal'])

const NAME_THE_PROXIES = 'name the proxies: loopback, or addresses/CIDRs separated by commas'

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
      `"true" would let any client forge its address; ${NAME_THE_PROXIES}`,
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
  // Every entry is a valid rule by now. A prefix of length 0 trusts every peer of its family (and
  // proxy-addr lets `::/0` match IPv4 clients too): the same as `true`, so refused like it.
  for (const address of addresses) {
    const parsed = parseAddressRule(address)
    if (parsed.ok && parsed.rule.prefix === 0) {
      throw new ConfigError(
        ['--trust-proxy'],
        `${quote(address)} has a prefix of length 0: like "true", it would let any client forge its address; ${NAME_THE_PROXIES}`,
      )
    }
  }
  return Object.freeze(entries)
}
