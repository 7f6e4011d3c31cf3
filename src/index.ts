/**
 * What a host uses: the policy, token stores and token lifecycle, scopes, levels, operations,
 * resources, export restrictions, trusted proxies and the errors. The OAuth server building blocks
 * are in `data-access-policy/oauth`; the framework adapters in `/express`, `/fastify`, `/hono`.
 *
 * @packageDocumentation
 * @module data-access-policy
 */
export type { AuthenticationResult, CredentialsInput } from './authentication/authenticate.js'
export type { HttpDenial } from './authentication/http-denial.js'
export { isSecureTransport, type TransportFacts } from './authentication/transport.js'
export {
  compileTrustProxy,
  type ForwardedOrigin,
  type TrustFunction,
  type TrustProxy,
} from './authentication/trusted-proxies.js'
export type { RequestFacts } from './decisions/decide.js'
export {
  type Allow,
  type Decision,
  type Deny,
  type DenyCode,
  type DenyStatus,
  deny,
  type ExportLimits,
} from './decisions/decision.js'
export {
  DATASET_LEVELS,
  type DatasetLevel,
  PUBLIC_DATASET_LEVELS,
  PUBLIC_WORKFLOW_LEVELS,
  type PublicDatasetLevel,
  type PublicWorkflowLevel,
  WORKFLOW_LEVELS,
  type WorkflowLevel,
} from './decisions/levels.js'
export { minimalScopes } from './decisions/minimal-scopes.js'
export type {
  Operation,
  OperationNeed,
  OperationSpec,
} from './decisions/operations.js'
export type { Principal } from './decisions/principal.js'
export type {
  DatasetResource,
  OrganizationResource,
  Resource,
  WorkflowResource,
} from './decisions/resources.js'
export { SCOPE_DESCRIPTIONS } from './decisions/scope-descriptions.js'
export {
  isScope,
  parseScopes,
  SCOPES,
  type Scope,
  type ScopeSet,
} from './decisions/scopes.js'
export {
  ConfigError,
  type ConfigPath,
  DataAccessPolicyError,
  type ErrorCode,
  InvalidArgumentError,
  ScopeError,
  TokenFormatError,
  TokenLifetimeError,
  TokenLookupLimitError,
  TokenStoreError,
} from './errors.js'
export {
  type AccessPolicy,
  type AccessPolicyOptions,
  createAccessPolicy,
  type DecisionEvent,
  type ErrorContext,
  type RequestContext,
} from './policy.js'
export { DEFAULT_IPV6_NETWORK_PREFIX, networkOfAddress } from './restrictions/client-network.js'
export {
  combineRestrictions,
  compileExportRestrictions,
  type ExportRestrictions,
  type ExportRestrictionsInput,
  exportRestrictionsSchema,
} from './restrictions/export-restrictions.js'
export { MemoryTokenStore, type MemoryTokenStoreOptions } from './tokens/memory-token-store.js'
export {
  isWellFormedTokenValue,
  TOKEN_VALUE_LENGTH,
  type TokenKind,
  tokenValueHint,
} from './tokens/token-format.js'
export { hashTokenValue, type TokenHashBackend } from './tokens/token-hash.js'
export {
  checkTokenLifetime,
  isExpiringSoon,
  MAX_TOKEN_LIFETIME_DAYS,
  TOKEN_LIFETIME_DAYS,
} from './tokens/token-lifetime.js'
export {
  type CreateApiTokenOptions,
  type CreatedToken,
  createApiToken,
  type ImportApiTokenOptions,
  importApiToken,
  MAX_REVOKED_REASON_LENGTH,
  MAX_TOKEN_NAME_LENGTH,
  type RotateTokenOptions,
  renameToken,
  rescopeToken,
  revokeToken,
  rotateToken,
  type TokenRecord,
  type TokenScopesInput,
  type TokenStatus,
  tokenStatus,
  tokenStatusOfHash,
  touchToken,
} from './tokens/token-record.js'
export {
  isRecentlyRevoked,
  isTokenRetained,
  REVOKED_DISPLAY_MS,
  tokenRetainUntil,
} from './tokens/token-retention.js'
export type { TokenLookupContext, TokenStore, TokenWriteReceipt } from './tokens/token-store.js'
