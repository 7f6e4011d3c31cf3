/**
 * The `--trust-proxy` value: which peers may set `X-Forwarded-For` / `X-Forwarded-Proto`. One
 * meaning on all three frameworks: `false` trusts nobody; otherwise `loopback` and addresses/CIDRs,
 * compiled once by the library's `compileTrustProxy` (the strict address parser of allow-lists) into
 * the function Express's `trust proxy`, Fastify's `trustProxy` and the Hono adapter all use.
 */
import { ConfigError, compileTrustProxy, type TrustFunction } from 'data-access-policy'

/** Nobody is trusted, or these peers are. */
export type TrustProxy = false | readonly string[]

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
  compileTrustProxy(value, ['--trust-proxy'])
  return Object.freeze(value.split(',').map((entry) => entry.trim()))
}

/**
 * The compiled form of a parsed value, for the frameworks.
 *
 * @example
 * express().set('trust proxy', trustFunction(parseTrustProxy('loopback')))
 */
export function trustFunction(trustProxy: TrustProxy): TrustFunction {
  return compileTrustProxy(trustProxy, ['--trust-proxy'])
}
