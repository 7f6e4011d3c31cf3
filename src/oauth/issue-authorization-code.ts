import { ConfigError, InvalidArgumentError } from '../errors.js'
import { buildRedirectUrl } from './build-redirect-url.js'
import type { AuthorizationCodeRecord } from './oauth-state-records.js'
import type { OAuthStateStore } from './oauth-state-store.js'
import { generateOpaqueSecret, hashSecret } from './random-secret.js'
import type { AuthorizationRequest } from './validate-authorization-request.js'

/** Longest (and default) lifetime of an authorization code: 60 seconds. */
export const MAX_AUTHORIZATION_CODE_TTL_MS = 60_000

/** Options of {@link issueAuthorizationCode}. */
export type IssueAuthorizationCodeOptions = {
  /** The validated request the user approved. */
  readonly request: AuthorizationRequest
  /** The signed-in user who approved it. */
  readonly userId: string
  /** The clock, epoch ms. */
  readonly now: number
  readonly store: OAuthStateStore
  /** Lifetime in ms, at most (and by default) 60 s. */
  readonly ttlMs?: number
  /** The issuer identifier, added as `iss` to `location` (RFC 9207 §2). */
  readonly issuer?: string | undefined
}

/** A freshly issued authorization code. */
export type IssueAuthorizationCodeResult = {
  /** The code; it exists only here and in `location`. */
  readonly code: string
  readonly expiresAt: number
  /** The redirect URI with `code`, `state` and `iss` added: where to send the browser (302/303). */
  readonly location: string
}

/**
 * Issues a single-use authorization code after the user approved: 190 random bits, stored only as
 * its SHA-256, bound to the client, redirect URI, code challenge, scopes, audience (the request's,
 * fixed here), `dpop_jkt` (RFC 9449 §10) and user, valid ≤ 60 s.
 *
 * @throws {ConfigError} for a bad `ttlMs`; {@link InvalidArgumentError} for a bad `now` or `userId`.
 * @example
 * const { location } = await issueAuthorizationCode({
 *   request, userId: 'alice', now: Date.now(), store, issuer: 'https://data.example.org',
 * })
 * reply.redirect(location, 303)
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-4.1.2
 * @see https://www.rfc-editor.org/rfc/rfc9207#section-2
 */
export async function issueAuthorizationCode(
  options: IssueAuthorizationCodeOptions,
): Promise<IssueAuthorizationCodeResult> {
  const { request, now } = options
  if (!Number.isSafeInteger(now) || now < 0) throw new InvalidArgumentError('now must be epoch milliseconds')
  if (typeof options.userId !== 'string' || options.userId === '') {
    throw new InvalidArgumentError('userId must be a non-empty string')
  }
  const ttlMs = options.ttlMs ?? MAX_AUTHORIZATION_CODE_TTL_MS
  if (!Number.isSafeInteger(ttlMs) || ttlMs <= 0 || ttlMs > MAX_AUTHORIZATION_CODE_TTL_MS) {
    throw new ConfigError(
      ['ttlMs'],
      `must be a positive integer of at most ${MAX_AUTHORIZATION_CODE_TTL_MS} ms`,
    )
  }
  const code = generateOpaqueSecret()
  const expiresAt = now + ttlMs
  const record: AuthorizationCodeRecord = {
    hash: hashSecret(code),
    version: 0,
    ...(request.clientId !== undefined && { clientId: request.clientId }),
    userId: options.userId,
    redirectUri: request.redirectUri,
    codeChallenge: request.codeChallenge,
    scopes: request.scopes.granted,
    ...(request.audience !== undefined && { audience: request.audience }),
    createdAt: now,
    expiresAt,
    // Kept as long again, so that a late redemption hears "expired" rather than "unknown".
    retainUntil: expiresAt + ttlMs,
    issuedTokenIds: [],
    ...(request.dpopJkt !== undefined && { dpopJkt: request.dpopJkt }),
  }
  await options.store.saveAuthorizationCode(record)
  const location = buildRedirectUrl(request.redirectUri, { code, state: request.state, iss: options.issuer })
  return { code, expiresAt, location }
}
