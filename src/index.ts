/**
 * The pure policy core: scopes, decisions, export restrictions, tokens, authentication and OAuth rules.
 *
 * @packageDocumentation
 * @module data-access-policy
 */
export {
  type AuthenticationResult,
  type CredentialsInput,
  extractBearerToken,
} from './authentication/authenticate.js'
export { type BearerCredentials, parseBearerHeader } from './authentication/bearer.js'
export { type HttpDenial, renderDenial, wwwAuthenticate } from './authentication/http-denial.js'
export { checkResponseSize, type DecideInput, decide, type RequestFacts } from './decisions/decide.js'
export {
  type Allow,
  DENY_STATUS,
  type Decision,
  type Deny,
  type DenyCode,
  type DenyStatus,
  deny,
  type ExportLimits,
  STATUS_MESSAGES,
} from './decisions/decision.js'
export {
  buildDecisionTables,
  type DecisionTableRow,
  type DecisionTables,
  type ExportTableRow,
} from './decisions/decision-tables.js'
export { createExportMeter, type ExportMeter } from './decisions/export-meter.js'
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
export {
  OPERATION_NAMES,
  OPERATIONS,
  type Operation,
  type OperationNeed,
  type OperationSpec,
} from './decisions/operations.js'
export { ANONYMOUS, type Principal } from './decisions/principal.js'
export type {
  DatasetResource,
  OrganizationResource,
  Resource,
  WorkflowResource,
} from './decisions/resources.js'
export {
  formatScopes,
  isScope,
  parseScopes,
  SCOPES,
  type Scope,
  ScopeSet,
  scopeSetOf,
} from './decisions/scopes.js'
export {
  ConfigError,
  type ConfigPath,
  DataAccessPolicyError,
  type ErrorCode,
  InvalidArgumentError,
  ScopeError,
  TokenFormatError,
  TokenStoreError,
} from './errors.js'
export * from './oauth/index.js'
export {
  type AccessPolicy,
  type AccessPolicyOptions,
  createAccessPolicy,
  type RequestContext,
} from './policy.js'
export {
  checkClientAddress,
  checkExportSize,
  combineRestrictions,
  compileExportRestrictions,
  type ExportRestrictions,
  type ExportRestrictionsInput,
  type ExportViolation,
  exportRestrictionsSchema,
  isExportRestrictions,
} from './restrictions/export-restrictions.js'
export { MemoryTokenStore } from './tokens/memory-token-store.js'
export {
  generateTokenValue,
  isWellFormedTokenValue,
  TOKEN_VALUE_LENGTH,
  type TokenKind,
  tokenKindOf,
} from './tokens/token-format.js'
export {
  hashTokenValue,
  hashTokenValueAsync,
  type TokenHashBackend,
  tokenHashBackend,
} from './tokens/token-hash.js'
export {
  type CreateApiTokenOptions,
  type CreatedToken,
  type CreateOAuthTokenOptions,
  createApiToken,
  createOAuthToken,
  type ImportApiTokenOptions,
  importApiToken,
  renameToken,
  rescopeToken,
  revokeToken,
  type TokenRecord,
  type TokenScopesInput,
  type TokenStatus,
  tokenRecordSchema,
  tokenStatus,
  touchToken,
} from './tokens/token-record.js'
export type { TokenStore } from './tokens/token-store.js'
