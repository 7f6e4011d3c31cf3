import { type Deny, deny, rateLimited } from '../decisions/decision.js'
import type { Principal } from '../decisions/principal.js'
import { parseScopes } from '../decisions/scopes.js'
import { TokenLookupLimitError, TokenStoreError } from '../errors.js'
import { networkOfAddress } from '../restrictions/client-network.js'
import { isAudienceOf } from '../tokens/audience.js'
import { isWellFormedTokenAt, isWellFormedTokenValue } from '../tokens/token-format.js'
import { hashTokenValue } from '../tokens/token-hash.js'
import { type TokenRecord, tokenStatusOfHash } from '../tokens/token-record.js'
import type { TokenLookupContext, TokenStore } from '../tokens/token-store.js'
import { parseBearerHeader } from './bearer.js'
import { withDeadline } from './deadline.js'
import {
  BOUND_AS_BEARER,
  checkDpopProof,
  type DpopCheck,
  type DpopRequestFacts,
  dpopDenial,
  NOT_BOUND,
  NOT_CHECKED,
  parseDpopHeader,
} from './dpop-authentication.js'

/** What a request offers for authentication, read by an adapter from its framework. */
export interface CredentialsInput {
  /** Every `Authorization` header value as received (several when the header was repeated). */
  readonly authorization: readonly string[]
  /** True when the query string or the body carries an `access_token` parameter. */
  readonly accessTokenParameter?: boolean
  /**
   * The client address, as the adapter's trusted-proxy handling resolved it: its network
   * (`networkOfAddress`) is recorded beside the token's last use.
   */
  readonly clientAddress?: string | undefined
  /** Every `DPoP` header value as received (RFC 9449 §4.1): asked only for the `DPoP` scheme. */
  readonly dpop?: readonly string[] | undefined
  /** The request's method, as sent: a proof's `htm`. */
  readonly method?: string | undefined
  /** `https` or `http`, as the adapter's trusted-proxy handling resolved it. */
  readonly protocol?: string | undefined
  /**
   * The `Host` header: part of a proof's `htu` only when the policy knows no public origin of its
   * own (its `resource`, or `dpop.origin`). The client chooses it.
   */
  readonly host?: string | undefined
  /** The request target as received: its path and query (or an absolute URL). */
  readonly target?: string | undefined
}

/** The result of authentication: a principal, or the denial to answer with. */
export type AuthenticationResult =
  | { readonly ok: true; readonly principal: Principal }
  | { readonly ok: false; readonly decision: Deny }

/** Options of {@link authenticateRequest}. */
export interface AuthenticateOptions {
  /** Where token records live. */
  readonly tokens: TokenStore
  /** The clock, in epoch milliseconds. */
  readonly now: () => number
  /** How long a store lookup may take before the request is answered 503. */
  readonly storeTimeoutMs: number
  /** Treat callers without credentials as the `public`-only anonymous principal. */
  readonly anonymous?: Principal
  /**
   * The resource identifier (RFC 8707) the caller guards: a token whose audience does not name it is
   * `invalid_token`; asked only for a token that has an audience. Absent (or answering
   * `undefined`): only tokens without an audience are accepted.
   */
  readonly resource?: () => string | undefined
  /** How long after a recorded use a token's `lastUsedAt` is written again. */
  readonly touchIntervalMs?: number
  /** The length of the IPv6 network recorded beside a token's last use; 64 by default. */
  readonly ipv6Prefix?: number
  /**
   * Told of every failure behind a 503 (the very value thrown or rejected), and of background
   * `touch` failures that change no answer: `store` for the token store, `adapter` for anything else.
   */
  readonly onError?: (error: unknown, stage: 'store' | 'adapter') => void
  /**
   * How DPoP proofs are checked (RFC 9449). Absent, a token sent with the `DPoP` scheme is refused;
   * a DPoP-bound token is refused as `Bearer` whatever this says.
   */
  readonly dpop?: DpopCheck
}

/** What the bearer header alone decides, before any store lookup. */
export type TokenExtraction =
  | { readonly ok: true; readonly token: string | undefined }
  | { readonly ok: false; readonly decision: Deny }

const NO_TOKEN: TokenExtraction = Object.freeze({ ok: true, token: undefined })

/**
 * Extracts the bearer token from what the request offers (RFC 6750 §2): one `Authorization`
 * header only; a token also sent as `access_token` is ambiguous (400); `access_token` alone is
 * never accepted.
 *
 * @example
 * extractBearerToken({ authorization: ['Bearer dap_…'] }) // { ok: true, token: 'dap_…' }
 * extractBearerToken({ authorization: ['Bearer a', 'Bearer b'] }) // { ok: false, decision: 400 invalid_request }
 */
export function extractBearerToken(input: CredentialsInput): TokenExtraction {
  const values = input.authorization
  if (values.length === 0) return NO_TOKEN
  if (values.length > 1) return { ok: false, decision: deny('invalid_request') }
  const credentials = parseBearerHeader(values[0]!)
  switch (credentials.kind) {
    case 'none':
      return NO_TOKEN
    case 'malformed':
      return { ok: false, decision: deny('invalid_request') }
    case 'token':
      if (input.accessTokenParameter === true) return { ok: false, decision: deny('invalid_request') }
      return { ok: true, token: credentials.token }
  }
}

type Authenticated = { readonly ok: true; readonly principal: Principal }

// Records are frozen and replaced on every change, so a result derived from one stays valid for
// exactly as long as the store keeps answering with that same object: a request for a known token
// allocates nothing here.
const results = new WeakMap<TokenRecord, Authenticated>()

function authenticatedAs(record: TokenRecord): Authenticated {
  let result = results.get(record)
  if (result === undefined) {
    result = Object.freeze({ ok: true, principal: createPrincipal(record) })
    if (Object.isFrozen(record)) results.set(record, result)
  }
  return result
}

function createPrincipal(record: TokenRecord): Principal {
  return Object.freeze({
    kind: 'token',
    userId: record.userId,
    scopes: parseScopes(record.scopes),
    tokenId: record.id,
    tokenKind: record.kind,
    ...(record.clientId === undefined ? {} : { clientId: record.clientId }),
  })
}

function isRecordFor(value: unknown, hash: string): value is TokenRecord {
  // A function is refused too, whatever fields it carries: a record is plain data.
  if (typeof value !== 'object' || value === null) return false
  const record = value as Partial<TokenRecord>
  return (
    (record.hash === hash || record.previousHash === hash) &&
    typeof record.id === 'string' &&
    typeof record.userId === 'string' &&
    (record.kind === 'api' || record.kind === 'oauth') &&
    Array.isArray(record.scopes) &&
    (record.audience === undefined || Array.isArray(record.audience))
  )
}

function failure(code: 'invalid_request' | 'missing_token' | 'invalid_token' | 'service_unavailable') {
  return Object.freeze({ ok: false as const, decision: deny(code) })
}

const MISSING_TOKEN = failure('missing_token')
const INVALID_TOKEN = failure('invalid_token')
// RFC 8707 / RFC 9068 §4: a token meant for another resource is refused before any decision, and
// the client is told why, so that it asks its authorization server for one meant for this resource.
const OTHER_RESOURCE = Object.freeze({
  ok: false as const,
  decision: Object.freeze({ ...deny('invalid_token'), description: 'the token is for another resource' }),
})
const UNAVAILABLE = failure('service_unavailable')

/**
 * Authenticates a request: header syntax, then token format and checksum (no store lookup for a
 * malformed value), then the store. Fails closed: a store that throws, hangs past the timeout or
 * answers garbage gives 503, never a principal. Answers synchronously unless the store does not
 * (a memory store does), so that a request costs no promise and no turn of the event loop.
 *
 * @see https://www.rfc-editor.org/rfc/rfc6750#section-3.1
 * @example
 * const result = await authenticateRequest({ authorization: [req.headers.authorization] },
 *                                          { tokens, now: Date.now, storeTimeoutMs: 2000 })
 */
export function authenticateRequest(
  input: CredentialsInput,
  options: AuthenticateOptions,
): AuthenticationResult | Promise<AuthenticationResult> {
  try {
    return authenticate(input, options)
  } catch (error) {
    // Whatever goes wrong (a runtime without a synchronous SHA-256, a hostile input object) is a
    // denial, never an exception for the adapter to mishandle.
    options.onError?.(error, 'adapter')
    return UNAVAILABLE
  }
}

const CANONICAL_PREFIX = 'Bearer '

// The header every API client sends: one `Bearer ` and a token of this package's format, with no
// `access_token` parameter. The token's own check (prefix, base62 alphabet, checksum) proves it a
// b64token too, so the grammar's scan of the header is skipped, a gain measured by bench/core.ts's
// authentication row. Anything else takes the full grammar, which answers alike.
// Stryker disable next-line BlockStatement: equivalent because the fast path only skips a scan whose answer the full grammar below gives anyway
function canonicalToken(input: CredentialsInput): string | undefined {
  const values = input.authorization
  // Stryker disable next-line ConditionalExpression: equivalent because the fast path only skips a scan whose answer the full grammar below gives anyway (the other mutants here are killed)
  if (values.length !== 1 || input.accessTokenParameter === true) return undefined
  const value = values[0]
  // Stryker disable next-line ConditionalExpression,StringLiteral: equivalent because refusing every value here only sends it through the full grammar (a `false` is killed: an object mimicking a string)
  if (typeof value !== 'string') return undefined
  // Stryker disable next-line ConditionalExpression,MethodExpression: equivalent because the fast path only skips a scan whose answer the full grammar below gives anyway
  if (!value.startsWith(CANONICAL_PREFIX)) return undefined
  // Stryker disable next-line ConditionalExpression: equivalent because refusing every header here only sends it through the full grammar (a `false` is killed: look-alike headers such as `Bearer a,b`)
  if (!isWellFormedTokenAt(value, CANONICAL_PREFIX.length)) return undefined
  return value.slice(CANONICAL_PREFIX.length)
}

// A token of this package's format, or one a store with a format of its own (a JWT issuer's)
// vouches for; anything else is refused before any lookup.
function isAcceptedTokenValue(token: string, tokens: TokenStore): boolean {
  return isWellFormedTokenValue(token) || tokens.acceptsTokenValue?.(token) === true
}

function authenticate(
  input: CredentialsInput,
  options: AuthenticateOptions,
): AuthenticationResult | Promise<AuthenticationResult> {
  let token = canonicalToken(input)
  // Stryker disable next-line ConditionalExpression: equivalent because the fast path only skips a scan whose answer the full grammar below gives anyway
  if (token === undefined) {
    const extracted = extractBearerToken(input)
    if (!extracted.ok) return extracted
    token = extracted.token
    if (token === undefined) {
      const dpop = input.authorization.length === 1 ? parseDpopHeader(input.authorization[0]!) : undefined
      if (dpop !== undefined && dpop.kind !== 'none') return authenticateDpop(dpop, input, options)
      return options.anonymous === undefined ? MISSING_TOKEN : { ok: true, principal: options.anonymous }
    }
    if (!isAcceptedTokenValue(token, options.tokens)) return INVALID_TOKEN
  }
  return lookUp(token, options, input.clientAddress, undefined)
}

const INVALID_REQUEST = failure('invalid_request')
const DPOP_INVALID_TOKEN = Object.freeze({
  ok: false as const,
  decision: dpopDenial('invalid_token', 'the token is malformed, unknown, expired or revoked'),
})

// `Authorization: DPoP <token>` (RFC 9449 §7.1): the token is looked up as a bearer token is, then
// the record must be bound and the one proof must be by its key, for this request and this token.
function authenticateDpop(
  credentials: ReturnType<typeof parseDpopHeader>,
  input: CredentialsInput,
  options: AuthenticateOptions,
): AuthenticationResult | Promise<AuthenticationResult> {
  if (credentials.kind !== 'token' || input.accessTokenParameter === true) return INVALID_REQUEST
  if (options.dpop === undefined) return { ok: false, decision: NOT_CHECKED }
  const token = credentials.token
  if (!isAcceptedTokenValue(token, options.tokens)) return DPOP_INVALID_TOKEN
  return lookUp(token, options, input.clientAddress, input)
}

// What a store that looks tokens up by value is told of a request without a known client address.
const NO_CONTEXT: TokenLookupContext = Object.freeze({})

function lookUp(
  token: string,
  options: AuthenticateOptions,
  clientAddress: string | undefined,
  dpop: DpopRequestFacts | undefined,
): AuthenticationResult | Promise<AuthenticationResult> {
  const hash = hashTokenValue(token)
  const now = options.now()
  let found: unknown
  const store = options.tokens
  try {
    // A store that asks the issuer (RFC 7662) needs the value; every other one sees only its hash.
    found =
      store.findByValue === undefined
        ? store.findByHash(hash)
        : store.findByValue(token, clientAddress === undefined ? NO_CONTEXT : { clientAddress })
  } catch (error) {
    return storeFailure(options, error)
  }
  // An in-memory store answers synchronously: no deadline, no promise, no turn of the event loop.
  if (!(found instanceof Promise)) return settle(found, hash, now, options, clientAddress, token, dpop)
  return withDeadline(found, options.storeTimeoutMs).then(
    (record) => settle(record, hash, now, options, clientAddress, token, dpop),
    (error: unknown) => storeFailure(options, error),
  )
}

// A failing store is a 503 the host can see: the hook hears the very value thrown or rejected. A
// store that refuses to pass on more lookups for the client's network is working as configured: a
// 429 for that client, nothing for the hook.
function storeFailure(options: AuthenticateOptions, error: unknown): AuthenticationResult {
  if (error instanceof TokenLookupLimitError) {
    return { ok: false, decision: rateLimited(error.retryAfterSeconds) }
  }
  options.onError?.(error, 'store')
  return UNAVAILABLE
}

function settle(
  found: unknown,
  hash: string,
  now: number,
  options: AuthenticateOptions,
  clientAddress: string | undefined,
  token: string,
  dpop: DpopRequestFacts | undefined,
): AuthenticationResult | Promise<AuthenticationResult> {
  if (found === undefined) return dpop === undefined ? INVALID_TOKEN : DPOP_INVALID_TOKEN
  if (!isRecordFor(found, hash)) {
    return storeFailure(
      options,
      new TokenStoreError('findByHash answered something that is not the record of that hash'),
    )
  }
  let result: Authenticated
  try {
    // A rotation's previous value is refused once its overlap ends; revocation ends both values.
    if (tokenStatusOfHash(found, hash, now) !== 'active')
      return dpop === undefined ? INVALID_TOKEN : DPOP_INVALID_TOKEN
    if (found.audience !== undefined && !isAudienceOf(found.audience, options.resource?.())) {
      return OTHER_RESOURCE
    }
    // A bound token is useless without its key: never accepted as a bearer token (RFC 9449 §7.1).
    if (dpop === undefined && found.dpopJkt !== undefined) return { ok: false, decision: BOUND_AS_BEARER }
    result = authenticatedAs(found)
  } catch (error) {
    return storeFailure(options, error)
  }
  if (dpop !== undefined) return proven(found, token, dpop, now, options, clientAddress, result)
  touch(options, found, now, clientAddress)
  return result
}

// The proof of a DPoP request, once its token is known to be active: a bound record and a proof by
// its key, or the denial; a replay cache that fails is the store's 503.
function proven(
  record: TokenRecord,
  token: string,
  dpop: DpopRequestFacts,
  now: number,
  options: AuthenticateOptions,
  clientAddress: string | undefined,
  result: Authenticated,
): AuthenticationResult | Promise<AuthenticationResult> {
  const jkt = record.dpopJkt
  if (typeof jkt !== 'string') return { ok: false, decision: NOT_BOUND }
  let checked: ReturnType<typeof checkDpopProof>
  try {
    checked = checkDpopProof(dpop, token, jkt, options.dpop!, now)
  } catch (error) {
    return storeFailure(options, error)
  }
  if (!(checked instanceof Promise)) return { ok: false, decision: checked }
  return checked.then(
    (denial): AuthenticationResult => {
      if (denial !== undefined) return { ok: false, decision: denial }
      touch(options, record, now, clientAddress)
      return result
    },
    (error: unknown) => storeFailure(options, error),
  )
}

// When this process last asked each store to touch each token. A shared store's record can reach a
// request from before the write landed (a read in flight, a cache refilled late), and its
// `lastUsedAt` alone would then let a second write through within the interval.
const touchedAt = new WeakMap<TokenStore, Map<string, number>>()
// Enough for every token a busy instance sees in an interval; past it the memo starts again, which
// costs at most one extra write per token.
const MAX_REMEMBERED_TOUCHES = 10_000

// lastUsedAt is bookkeeping: written in the background, at most once per interval, and its failure
// never changes the answer.
function touch(
  options: AuthenticateOptions,
  record: TokenRecord,
  now: number,
  clientAddress: string | undefined,
): void {
  const interval = options.touchIntervalMs ?? 60_000
  // Stryker disable next-line ConditionalExpression: equivalent because `now - undefined` is NaN, and NaN < interval is false
  if (record.lastUsedAt !== undefined && now - record.lastUsedAt < interval) return
  let touched = touchedAt.get(options.tokens)
  if (touched === undefined) {
    touched = new Map()
    touchedAt.set(options.tokens, touched)
  }
  const last = touched.get(record.id)
  if (last !== undefined && now - last < interval && now >= last) return
  if (touched.size >= MAX_REMEMBERED_TOUCHES) touched.clear()
  touched.set(record.id, now)
  const report = (error: unknown) => options.onError?.(error, 'store')
  try {
    const network = networkOfAddress(clientAddress, options.ipv6Prefix)
    const write =
      network === undefined
        ? options.tokens.touch(record.id, now)
        : options.tokens.touch(record.id, now, network)
    write.catch(report)
  } catch (error) {
    // A synchronous throw from the store is as harmless here as a rejection, and as visible.
    report(error)
  }
}
