import { parseBearerHeader } from './bearer.js'
import { type Deny, deny } from './decision.js'
import type { Principal } from './principal.js'
import { parseScopes } from './scopes.js'
import { isWellFormedTokenValue } from './token-format.js'
import { hashTokenValue } from './token-hash.js'
import { type TokenRecord, tokenStatus } from './token-record.js'
import type { TokenStore } from './token-store.js'

/** What a request offers for authentication, read by an adapter from its framework. */
export interface CredentialsInput {
  /** Every `Authorization` header value as received (several when the header was repeated). */
  readonly authorization: readonly string[]
  /** True when the query string or the body carries an `access_token` parameter. */
  readonly accessTokenParameter?: boolean
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
  /** How long after a recorded use a token's `lastUsedAt` is written again. */
  readonly touchIntervalMs?: number
}

/** What the bearer header alone decides, before any store lookup. */
export type TokenExtraction = { readonly ok: true; readonly token: string | undefined } | { readonly ok: false; readonly decision: Deny }

const NO_TOKEN: TokenExtraction = Object.freeze({ ok: true, token: undefined })

/**
 * Extracts the bearer token from what the request offers (RFC 6750 §2): one `Authorization`
 * header only; a token also sent as `access_token` is ambiguous (400); `access_token` alone is
 * never accepted.
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

const TIMEOUT = Symbol('timeout')

async function lookup(tokens: TokenStore, hash: string, timeoutMs: number): Promise<unknown> {
  const pending = tokens.findByHash(hash)
  // Only a real promise needs a timer; a store that answers synchronously costs none.
  if (!(pending instanceof Promise)) return pending
  let timer: ReturnType<typeof setTimeout> | undefined
  const timeout = new Promise<typeof TIMEOUT>((resolve) => {
    timer = setTimeout(resolve, timeoutMs, TIMEOUT)
  })
  try {
    const found = await Promise.race([pending, timeout])
    if (found === TIMEOUT) throw new Error('token store timed out')
    return found
  } finally {
    clearTimeout(timer)
  }
}

// Records are frozen and replaced on every change, so a principal derived from one stays valid for
// exactly as long as the store keeps answering with that same object.
const principals = new WeakMap<TokenRecord, Principal>()

function principalOf(record: TokenRecord): Principal {
  let principal = principals.get(record)
  if (principal === undefined) {
    principal = createPrincipal(record)
    if (Object.isFrozen(record)) principals.set(record, principal)
  }
  return principal
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
  if (typeof value !== 'object' || value === null) return false
  const record = value as Partial<TokenRecord>
  return (
    record.hash === hash &&
    typeof record.id === 'string' &&
    typeof record.userId === 'string' &&
    (record.kind === 'api' || record.kind === 'oauth') &&
    Array.isArray(record.scopes)
  )
}

/**
 * Authenticates a request: header syntax, then token format and checksum (no store lookup for a
 * malformed value), then the store. Fails closed: a store that throws, hangs past the timeout or
 * answers garbage gives 503, never a principal.
 *
 * @see https://www.rfc-editor.org/rfc/rfc6750#section-3.1
 */
export async function authenticateRequest(
  input: CredentialsInput,
  options: AuthenticateOptions,
): Promise<AuthenticationResult> {
  const extracted = extractBearerToken(input)
  if (!extracted.ok) return extracted
  const token = extracted.token
  if (token === undefined) {
    return options.anonymous === undefined
      ? { ok: false, decision: deny('missing_token') }
      : { ok: true, principal: options.anonymous }
  }
  if (!isWellFormedTokenValue(token)) return { ok: false, decision: deny('invalid_token') }
  const hash = hashTokenValue(token)
  let principal: Principal
  let record: TokenRecord
  const now = options.now()
  try {
    const found = await lookup(options.tokens, hash, options.storeTimeoutMs)
    if (found === undefined) return { ok: false, decision: deny('invalid_token') }
    if (!isRecordFor(found, hash)) throw new Error('token store answered something that is not a token record')
    record = found
    if (tokenStatus(record, now) !== 'active') return { ok: false, decision: deny('invalid_token') }
    principal = principalOf(record)
  } catch {
    return { ok: false, decision: deny('service_unavailable') }
  }
  touch(options, record, now)
  return { ok: true, principal }
}

// lastUsedAt is bookkeeping: written in the background, at most once per interval, and its failure
// never changes the answer.
function touch(options: AuthenticateOptions, record: TokenRecord, now: number): void {
  const interval = options.touchIntervalMs ?? 60_000
  if (record.lastUsedAt !== undefined && now - record.lastUsedAt < interval) return
  try {
    options.tokens.touch(record.id, now).catch(() => {})
  } catch {
    // A synchronous throw from the store is as harmless here as a rejection.
  }
}
