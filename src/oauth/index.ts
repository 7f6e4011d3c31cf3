/**
 * The OAuth server building blocks (docs/oauth.md; RFC 6749, 7636, 8628, 7009, 7662, 8707, 9207, 7591, 9449):
 * PKCE, authorization requests and codes, client ID metadata documents and dynamic registration (with
 * the SSRF rule {@link isPublicAddress}), sender-constrained tokens (DPoP), the device flow, the token, revocation and introspection
 * endpoints' rules and the state stores. For hosts that run their own authorization server; an API
 * that only checks tokens needs none of it (one on another host uses `data-access-policy/introspection`).
 *
 * @packageDocumentation
 * @module data-access-policy/oauth
 */
export { isResourceIdentifier, MAX_AUDIENCE_SIZE, RESOURCE_IDENTIFIER_RULE } from '../tokens/audience.js'
export {
  type CreateOAuthTokenOptions,
  createOAuthToken,
  DEFAULT_OAUTH_TOKEN_TTL_MS,
} from '../tokens/token-record.js'
export { buildRedirectUrl } from './build-redirect-url.js'
export { calculatePkceChallenge } from './calculate-pkce-challenge.js'
export {
  type CacheLifetimeBounds,
  type CheckClientIdUrlOptions,
  type ClientIdUrlCheck,
  type ClientMetadata,
  type ClientMetadataParse,
  checkClientIdUrl,
  DEFAULT_DOCUMENT_CACHE_BOUNDS,
  documentCacheLifetimeMs,
  isPlainText,
  MAX_CLIENT_ID_URL_LENGTH,
  MAX_CLIENT_NAME_LENGTH,
  MAX_CLIENT_REDIRECT_URIS,
  metadataDocumentClient,
  parseClientMetadataDocument,
} from './client-metadata-document.js'
export {
  type ClientRegistration,
  type ClientRegistrationCheck,
  generateRegisteredClientId,
  isRegisteredClientId,
  REGISTERED_CLIENT_ID_PREFIX,
  registeredClient,
  registrationResponse,
  validateClientRegistration,
} from './client-registration.js'
export {
  type DecideDeviceAuthorizationOptions,
  type DecideDeviceAuthorizationResult,
  decideDeviceAuthorization,
} from './decide-device-authorization.js'
export type { OAuthEndpointResponse } from './endpoint-response.js'
export {
  type DeviceAuthorizationEndpointResponse,
  type HandleDeviceAuthorizationRequestOptions,
  handleDeviceAuthorizationRequest,
} from './handle-device-authorization-request.js'
export {
  type HandleIntrospectionRequestOptions,
  handleIntrospectionRequest,
  type IntrospectionEndpointResponse,
  type IntrospectionResponseBody,
} from './handle-introspection-request.js'
export {
  type HandleRevocationRequestOptions,
  handleRevocationRequest,
  type RevocationEndpointResponse,
} from './handle-revocation-request.js'
export {
  DEFAULT_REFRESH_TOKEN_TTL_MS,
  DEVICE_CODE_GRANT_TYPE,
  type HandleTokenRequestOptions,
  handleTokenRequest,
  type TokenEndpointResponse,
  type TokenResponseBody,
} from './handle-token-request.js'
export {
  type IssueAuthorizationCodeOptions,
  type IssueAuthorizationCodeResult,
  issueAuthorizationCode,
  MAX_AUTHORIZATION_CODE_TTL_MS,
} from './issue-authorization-code.js'
export { MemoryOAuthStateStore } from './memory-oauth-state-store.js'
export { hashClientSecret, type LookupClient, type OAuthClient } from './oauth-client.js'
export { OAUTH_ERROR_CODES, OAuthError, type OAuthErrorBody, type OAuthErrorCode } from './oauth-error.js'
export type { OAuthParams } from './oauth-params.js'
export type {
  AuthorizationCodeRecord,
  DeviceGrantRecord,
  DeviceGrantStatus,
  IssuedAccessToken,
  RefreshFamilyRecord,
} from './oauth-state-records.js'
export type { OAuthStateStore } from './oauth-state-store.js'
export { isValidCodeChallenge, isValidCodeVerifier } from './pkce-syntax.js'
export { isPublicAddress } from './public-address.js'
export { isAllowedRedirectUri, isLoopbackRedirectUri } from './redirect-uri.js'
export {
  isRegistrableRedirectUri,
  MAX_REGISTRABLE_REDIRECT_URI_LENGTH,
} from './registrable-redirect-uri.js'
export type { KnownResources } from './resource-indicators.js'
export {
  type DeviceAuthorizationResponseBody,
  type StartDeviceAuthorizationOptions,
  startDeviceAuthorization,
} from './start-device-authorization.js'
export type { TokenEndpointDpopOptions } from './token-endpoint-dpop.js'
export {
  type AuthorizationRequest,
  type ValidateAuthorizationRequestOptions,
  type ValidateAuthorizationRequestResult,
  validateAuthorizationRequest,
} from './validate-authorization-request.js'
export { verifyPkce } from './verify-pkce.js'
export {
  type DeviceGrantSummary,
  MAX_USER_CODE_FAILURES,
  USER_CODE_FAILURE_WINDOW_MS,
  type VerifyUserCodeFailure,
  type VerifyUserCodeOptions,
  type VerifyUserCodeResult,
  verifyUserCode,
} from './verify-user-code.js'
