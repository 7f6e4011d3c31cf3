/**
 * Which peers may speak for a client through `X-Forwarded-For` / `X-Forwarded-Proto`, parsed with
 * the same strict address parser as export allow-lists, and the walk of the forwarding chain. Pure:
 * the adapters hand in the socket's address and the header values they read.
 */
import { ConfigError, type ConfigPath } from '../errors.js'
import { parseAddressRule } from '../restrictions/ip-address.js'
import { type AllowList, tryCompileAllowList } from '../restrictions/ip-matcher.js'

/**
 * Which peers may set `X-Forwarded-For` / `X-Forwarded-Proto`, with Express's `trust proxy`
 * meaning: `false` (none), `true` (all), or addresses, CIDRs and the names `loopback`, `linklocal`,
 * `uniquelocal`, as a list or one comma-separated string.
 */
export type TrustProxy = boolean | string | readonly string[]

/**
 * Whether the address at `hop` (0 = the direct peer) is a trusted proxy: the shape Express's
 * `trust proxy` setting and Fastify's `trustProxy` option take as a function.
 */
export type TrustFunction = (address: string, hop: number) => boolean

/** Where a request came from and over what, after the trusted proxies' headers were applied. */
export interface ForwardedOrigin {
  /** The client's address: the nearest hop of the chain that is not a trusted proxy. */
  readonly clientAddress: string | undefined
  /** `https` or `http`. */
  readonly protocol: string
}

// The ranges behind Express's (proxy-addr's) names, so a value means the same on every framework.
const NAMED_RANGES: Readonly<Record<string, readonly string[]>> = {
  loopback: ['127.0.0.0/8', '::1/128'],
  linklocal: ['169.254.0.0/16', 'fe80::/10'],
  uniquelocal: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7'],
}

const TRUST_NONE: TrustFunction = () => false
const TRUST_ALL: TrustFunction = () => true

/**
 * Compiles a {@link TrustProxy} value once. Entries are parsed strictly (`010.0.0.1`, `1.2.3.4/33`,
 * `10.0.0.1/8` and `not-an-ip` are errors, not guesses), and a prefix of length 0 (`0.0.0.0/0`,
 * `::/0`) is refused: it trusts every peer of its family, which is `true` spelled by accident.
 * The result is also what Express's `trust proxy` and Fastify's `trustProxy` accept.
 *
 * @param option - the option's name in error messages, e.g. `['trustProxy']` or `['--trust-proxy']`.
 * @throws {ConfigError} naming the option and quoting the bad entry.
 * @example
 * const trust = compileTrustProxy('loopback, 10.0.0.0/8')
 * trust('10.1.2.3', 0) // true
 * express().set('trust proxy', trust)
 */
export function compileTrustProxy(
  value: TrustProxy | undefined,
  option: ConfigPath = ['trustProxy'],
): TrustFunction {
  if (value === undefined || value === false) return TRUST_NONE
  if (value === true) return TRUST_ALL
  const entries = typeof value === 'string' ? value.split(',').map((entry) => entry.trim()) : value
  if (!Array.isArray(entries) || !entries.every((entry) => typeof entry === 'string')) {
    throw new ConfigError(option, 'must be a boolean, a string or an array of strings')
  }
  const rules: string[] = []
  for (const entry of entries as readonly string[]) {
    if (entry === '') throw new ConfigError(option, `${JSON.stringify(value)} has an empty entry`)
    const named = NAMED_RANGES[entry]
    if (named === undefined) rules.push(entry)
    else rules.push(...named)
  }
  const allowList = compileTrustedList(rules, option)
  // Every entry is a valid rule by now. A prefix of length 0 (`0.0.0.0/0`, `::/0`, and the mapped
  // `::ffff:0.0.0.0/96`) trusts every peer of its family: `true` spelled by accident.
  for (const rule of rules) {
    const parsed = parseAddressRule(rule)
    if (parsed.ok && parsed.rule.prefix === 0) {
      throw new ConfigError(
        option,
        `${JSON.stringify(rule)} has a prefix of length 0: like "true", it would let any client forge its address; name the proxies: loopback, or addresses/CIDRs separated by commas`,
      )
    }
  }
  return (address) => allowList.allows(address)
}

// One option, one line: the error names the option and quotes the entry, not a position in a list
// the host may have written as one comma-separated string.
function compileTrustedList(rules: readonly string[], option: ConfigPath): AllowList {
  const result = tryCompileAllowList(rules)
  if (result.ok) return result.allowList
  const [first] = result.issues
  // The cause keeps the entry's position, for a host that reads the list it wrote.
  const cause = new ConfigError([...option, first!.index], first!.detail)
  throw new ConfigError(option, first!.detail, { cause })
}

/**
 * The `X-Forwarded-Proto` a trusted peer reports: `https` only when every listed hop says so, since
 * an appending proxy may carry a value its own client made up.
 *
 * @example
 * forwardedProtocol('https, http') // 'http'
 */
export function forwardedProtocol(header: string): string {
  for (const entry of header.split(',')) {
    if (entry.trim().toLowerCase() !== 'https') return 'http'
  }
  return 'https'
}

/**
 * Resolves the client address and protocol from the direct peer and the forwarding headers, which
 * count only as far as the peers that relayed them are trusted: the chain is walked from the peer
 * outwards and the first untrusted hop is the client, as Express and Fastify do.
 *
 * @example
 * resolveForwarded(compileTrustProxy('loopback'), { peerAddress: '127.0.0.1', directProtocol: 'http',
 *   forwardedFor: '203.0.113.7', forwardedProto: 'https' }) // { clientAddress: '203.0.113.7', protocol: 'https' }
 */
export function resolveForwarded(
  trust: TrustFunction,
  request: {
    readonly peerAddress: string | undefined
    readonly directProtocol: string
    readonly forwardedFor: string | undefined
    readonly forwardedProto: string | undefined
  },
): ForwardedOrigin {
  const peer = request.peerAddress
  const forwardedProto = request.forwardedProto
  const forwardedFor = request.forwardedFor
  // Without forwarding headers the answer is the connection's whatever the peer is: no trust check
  // (an address parse and a range lookup) on the requests that come straight from their client.
  // Stryker disable next-line ConditionalExpression,BlockStatement: equivalent because without headers the walk below answers the same, after a trust check
  if (forwardedFor === undefined && forwardedProto === undefined) {
    return { clientAddress: peer, protocol: request.directProtocol }
  }
  // A peer without an address (Hono's getConnInfo may give none) vouches for nothing, even under
  // `trustProxy: true`: the headers stand for the connection, which cannot be placed.
  if (peer === undefined || !trust(peer, 0)) return { clientAddress: peer, protocol: request.directProtocol }
  const protocol = forwardedProto ? forwardedProtocol(forwardedProto) : request.directProtocol
  if (forwardedFor === undefined) return { clientAddress: peer, protocol }
  const hops = forwardedHops(forwardedFor)
  let client = peer
  for (let i = hops.length - 1, hop = 1; i >= 0; i--, hop++) {
    client = hops[i]!
    if (!trust(client, hop)) break
  }
  return { clientAddress: client, protocol }
}

// The entries of `X-Forwarded-For` as Express and Fastify read them (the `forwarded` package):
// spaces around an entry are dropped, empty entries skipped, anything else kept as sent.
function forwardedHops(header: string): string[] {
  const hops: string[] = []
  for (const entry of header.split(',')) {
    let start = 0
    let end = entry.length
    // Stryker disable next-line ConditionalExpression,EqualityOperator: equivalent because charCodeAt past the end is NaN, which is no space
    while (start < end && entry.charCodeAt(start) === 0x20) start++
    // Stryker disable next-line ConditionalExpression,EqualityOperator: equivalent because only an all-space entry runs past its start, and it is skipped either way
    while (end > start && entry.charCodeAt(end - 1) === 0x20) end--
    if (start < end) hops.push(entry.slice(start, end))
  }
  return hops
}

/**
 * A framework's resolved protocol, made as strict as {@link forwardedProtocol}: `https` over a plain
 * socket can only come from a trusted `X-Forwarded-Proto`, which Express reads by its first entry
 * and Fastify by its last; either would let one appending hop vouch for another.
 *
 * @example
 * strictProtocol(req.protocol, false, req.headers['x-forwarded-proto'])
 */
export function strictProtocol(
  protocol: string,
  encrypted: boolean,
  forwardedProto: string | readonly string[] | undefined,
): string {
  // URI schemes are case-insensitive (RFC 3986 §3.1).
  const normalized = protocol.toLowerCase()
  if (normalized !== 'https' || encrypted || typeof forwardedProto !== 'string') return normalized
  return forwardedProtocol(forwardedProto)
}
