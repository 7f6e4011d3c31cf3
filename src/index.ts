/**
 * The pure policy core: scopes, decisions, export restrictions, tokens, authentication and OAuth rules.
 *
 * @packageDocumentation
 * @module data-access-policy
 */
export { type AuthenticationResult, type CredentialsInput, extractBearerToken } from './authenticate.js'
export { type BearerCredentials, parseBearerHeader } from './bearer.js'
export { checkResponseSize, type DecideInput, decide, type RequestFacts } from './decide.js'
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
} from './decision.js'
export {
  buildDecisionTables,
  type DecisionTableRow,
  type DecisionTables,
  type ExportTableRow,
} from './decision-tables.js'
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
export { createExportMeter, type ExportMeter } from './export-meter.js'
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
} from './export-restrictions.js'
export { type HttpDenial, renderDenial, wwwAuthenticate } from './http-denial.js'
export {
  DATASET_LEVELS,
  type DatasetLevel,
  PUBLIC_DATASET_LEVELS,
  PUBLIC_WORKFLOW_LEVELS,
  type PublicDatasetLevel,
  type PublicWorkflowLevel,
  WORKFLOW_LEVELS,
  type WorkflowLevel,
} from './levels.js'
export { MemoryTokenStore } from './memory-token-store.js'
export { minimalScopes } from './minimal-scopes.js'
export * from './oauth/index.js'
export {
  OPERATION_NAMES,
  OPERATIONS,
  type Operation,
  type OperationNeed,
  type OperationSpec,
} from './operations.js'
export {
  type AccessPolicy,
  type AccessPolicyOptions,
  createAccessPolicy,
  type RequestContext,
} from './policy.js'
export { ANONYMOUS, type Principal } from './principal.js'
export type { DatasetResource, OrganizationResource, Resource, WorkflowResource } from './resources.js'
export { formatScopes, isScope, parseScopes, SCOPES, type Scope, ScopeSet, scopeSetOf } from './scopes.js'
export {
  generateTokenValue,
  isWellFormedTokenValue,
  TOKEN_VALUE_LENGTH,
  type TokenKind,
  tokenKindOf,
} from './token-format.js'
export { hashTokenValue, hashTokenValueAsync } from './token-hash.js'
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
} from './token-record.js'
export type { TokenStore } from './token-store.js'
