import { type TokenKind, tokenKindOf } from '../tokens/token-format.js'
import { hashTokenValue } from '../tokens/token-hash.js'
import { type TokenRecord, type TokenStatus, tokenStatusOfHash } from '../tokens/token-record.js'
import type { TokenStore } from '../tokens/token-store.js'
import { authenticateClient } from './authenticate-client.js'
import type { LookupClient, OAuthClient } from './oauth-client.js'
import { OAuthError } from './oauth-error.js'
import { type OAuthParams, readParam } from './oauth-params.js'
import type { RefreshFamilyRecord } from './oauth-state-records.js'
import type { OAuthStateStore } from './oauth-state-store.js'
import { hashSecret } from './random-secret.js'

// Private helper of the revocation and introspection endpoints: what a presented token value is.

/** A token a client presented to revocation or introspection, as the stores know it. */
export type PresentedToken =
  | {
      readonly type: 'access'
      readonly kind: TokenKind
      readonly record: TokenRecord
      /** The presented value's own status: a value a rotation replaced ends with its overlap. */
      readonly status: TokenStatus
      /** When the presented value stops working: the record's expiry, or its overlap's end. */
      readonly expiresAt: number | undefined
    }
  | { readonly type: 'refresh'; readonly family: RefreshFamilyRecord; readonly current: boolean }
  | { readonly type: 'unknown' }

const UNKNOWN: PresentedToken = Object.freeze({ type: 'unknown' })
// A refresh token: 48 base62 characters (issue-tokens.ts); anything else is no refresh token.
const REFRESH_TOKEN = /^[0-9A-Za-z]{48}$/

// A store answers a rotated token's record for its replaced value too (during and after the
// overlap), so the value's own status is the record's for its hash, as authentication decides it.
async function findAccessToken(
  tokens: TokenStore,
  value: string,
  now: number,
): Promise<PresentedToken | undefined> {
  // No kind: the value is not well formed, so no store can hold it.
  const kind = tokenKindOf(value)
  if (kind === undefined) return undefined
  const hash = hashTokenValue(value)
  const record = await tokens.findByHash(hash)
  if (record === undefined) return undefined
  const status = tokenStatusOfHash(record, hash, now)
  if (status === undefined) return undefined
  const expiresAt =
    hash === record.hash
      ? record.expiresAt
      : Math.min(record.expiresAt ?? Number.POSITIVE_INFINITY, record.previousHashExpiresAt!)
  return { type: 'access', kind, record, status, expiresAt }
}

// Only a hash the family still indexes (its current token or a recently rotated one) finds it: a
// value that merely names a family by its prefix is no token of it.
async function findRefreshToken(
  state: OAuthStateStore,
  value: string,
  now: number,
): Promise<PresentedToken | undefined> {
  if (!REFRESH_TOKEN.test(value)) return undefined
  const hash = hashSecret(value)
  const family = await state.findRefreshFamilyByTokenHash(hash, now)
  return family === undefined
    ? undefined
    : { type: 'refresh', family, current: family.tokenHashes.at(-1) === hash }
}

/**
 * Finds the token a client presented. The hint (RFC 7009 §2.1, RFC 7662 §2.1) only orders the
 * search: a wrong or unknown hint still finds the token, since a client's hint is not trusted.
 * The value's own shape (`dap_`/`dao_` with a checksum, or a refresh token's 48 characters) decides
 * which stores can hold it, so a malformed value costs no lookup.
 */
export async function findPresentedToken(
  value: string,
  hint: string | undefined,
  stores: { readonly tokens: TokenStore; readonly state: OAuthStateStore; readonly now: number },
): Promise<PresentedToken> {
  const access = () => findAccessToken(stores.tokens, value, stores.now)
  const refresh = () => findRefreshToken(stores.state, value, stores.now)
  const order = hint === 'refresh_token' ? [refresh, access] : [access, refresh]
  for (const find of order) {
    const found = await find()
    if (found !== undefined) return found
  }
  return UNKNOWN
}

/** What {@link readPresentedToken} needs: the endpoints' client registry, stores and clock. */
export interface PresentedTokenRequest {
  readonly clients: LookupClient
  readonly authorization?: string | undefined
  readonly tokens: TokenStore
  readonly state: OAuthStateStore
  readonly now: number
}

/**
 * What revocation and introspection read first, in this order: the client, authenticated as at the
 * token endpoint, then let through by `admit` (which throws to refuse it); the `token` parameter,
 * required; the token it names ({@link findPresentedToken}, with `token_type_hint`).
 *
 * @throws {OAuthError} `invalid_request` or `invalid_client`, or what `admit` throws; a store's error.
 */
export async function readPresentedToken(
  params: OAuthParams,
  request: PresentedTokenRequest,
  admit: (client: OAuthClient | undefined) => void = () => {},
): Promise<{ readonly client: OAuthClient | undefined; readonly found: PresentedToken }> {
  const value = readParam(params, 'token')
  const hint = readParam(params, 'token_type_hint')
  const client = await authenticateClient({
    params,
    authorization: request.authorization,
    lookupClient: request.clients,
  })
  admit(client)
  if (value === undefined) throw new OAuthError('invalid_request', 'token is required')
  const { tokens, state, now } = request
  return { client, found: await findPresentedToken(value, hint, { tokens, state, now }) }
}
