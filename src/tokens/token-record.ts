/**
 * A stored token and everything done to one, gathered under one module path: its shape and field
 * rules (token-fields.ts), the schema that reads a stored record back (token-record-schema.ts),
 * creating and importing tokens (token-creation.ts), the lifecycle changes — rename, rescope,
 * revoke, touch, rotate (token-lifecycle.ts) — and where a token stands (token-status.ts).
 */
export {
  type CreateApiTokenOptions,
  type CreateOAuthTokenOptions,
  createApiToken,
  createOAuthToken,
  DEFAULT_OAUTH_TOKEN_TTL_MS,
  type ImportApiTokenOptions,
  importApiToken,
} from './token-creation.js'
export {
  type CreatedToken,
  MAX_REVOKED_REASON_LENGTH,
  MAX_TOKEN_NAME_LENGTH,
  type TokenRecord,
  type TokenScopesInput,
  type TokenStatus,
} from './token-fields.js'
export {
  MAX_ROTATION_OVERLAP_MS,
  type RotateTokenOptions,
  renameToken,
  rescopeToken,
  revokeToken,
  rotateToken,
  touchToken,
} from './token-lifecycle.js'
export { tokenRecordSchema } from './token-record-schema.js'
export { tokenStatus, tokenStatusOfHash } from './token-status.js'
