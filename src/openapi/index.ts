/**
 * API descriptions that cannot drift from the policy: OpenAPI security schemes, each route's
 * `security` with its minimal scope, its denial responses and an `x-data-access` extension, all
 * derived from the operation catalogue and the core's decisions. Pure: it imports no framework and
 * no generator, and returns plain OpenAPI objects for any of them.
 *
 * @packageDocumentation
 * @module data-access-policy/openapi
 */
export {
  type DescribedOperation,
  describeRoutes,
  type PathParameterObject,
  type PathsObject,
  type RouteDescription,
} from './describe-routes.js'
export type {
  AuthorizationCodeFlowObject,
  DataAccessExtension,
  DeviceAuthorizationFlowObject,
  HeaderObject,
  JsonSchema,
  OpenApiOptions,
  OpenApiVersion,
  OperationSecurity,
  ResponseObject,
  RouteRequirement,
  SecurityRequirement,
  SecuritySchemeObject,
} from './openapi-objects.js'
export {
  DATA_ACCESS_EXTENSION,
  minimalScopeOf,
  operationSecurity,
  withOperationSecurity,
} from './operation-security.js'
export { SECURITY_SCHEME_NAMES, securitySchemes } from './security-schemes.js'
