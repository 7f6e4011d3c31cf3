import type { DenyCode } from '../decisions/decision.js'
import type { Operation } from '../decisions/operations.js'
import type { Scope } from '../decisions/scopes.js'

/**
 * The OpenAPI version of the document the objects go into: `3.0`, `3.1` (the default) or `3.2`.
 * It decides what the objects may say: scopes on a bearer requirement (3.1 on), and the device
 * flow as a standard `deviceAuthorization` flow (3.2) or an `x-deviceAuthorization` extension.
 */
export type OpenApiVersion = '3.0' | '3.1' | '3.2'

/**
 * What every function of `data-access-policy/openapi` takes: the document's version and how the
 * host's policy and OAuth server are set up. Pass the same options everywhere in one document.
 */
export interface OpenApiOptions {
  /** The document's OpenAPI version. Default `3.1`. */
  readonly openapi?: OpenApiVersion
  /**
   * The base URL of the OAuth server (`{auth_url}` of the contract): adds the `oauth2` scheme, with
   * `/oauth/authorize`, `/oauth/device_authorization` and `/oauth/token` under it, as an
   * alternative to the bearer scheme in every requirement. Without it, only the bearer scheme.
   */
  readonly issuer?: string
  /**
   * True when the policy was built with `allowAnonymous`: a request without credentials is the
   * `public`-only caller, so every requirement also offers no credentials at all. Default false.
   */
  readonly anonymous?: boolean
}

// Object types, not interfaces: a type alias is assignable to a generator's own types that carry an
// `x-…` index signature (openapi3-ts, openapi-types), an interface is not.

/** A JSON Schema, in the subset these descriptions use (valid in OpenAPI 3.0, 3.1 and 3.2). */
export type JsonSchema = {
  type?: 'object' | 'string' | 'integer'
  description?: string
  enum?: (string | number)[]
  properties?: Record<string, JsonSchema>
  required?: string[]
  additionalProperties?: boolean
}

/** An OpenAPI Header Object. */
export type HeaderObject = {
  description: string
  required?: boolean
  schema: JsonSchema
}

/** An OpenAPI Response Object: a denial's description, headers and JSON body. */
export type ResponseObject = {
  description: string
  headers?: Record<string, HeaderObject>
  content?: Record<string, { schema: JsonSchema }>
}

/** An OpenAPI Security Requirement Object: scheme name → scopes. */
export type SecurityRequirement = Record<string, string[]>

/** The authorization-code flow of the `oauth2` security scheme. */
export type AuthorizationCodeFlowObject = {
  authorizationUrl: string
  tokenUrl: string
  scopes: Record<string, string>
  /** PKCE's challenge method, as renderers that read it expect: `SHA-256`. */
  'x-usePkce': 'SHA-256'
}

/** The device flow (RFC 8628) of the `oauth2` security scheme. */
export type DeviceAuthorizationFlowObject = {
  deviceAuthorizationUrl: string
  tokenUrl: string
  scopes: Record<string, string>
  /** PKCE's challenge method, as renderers that read it expect: `SHA-256`. */
  'x-usePkce': 'SHA-256'
}

/** An OpenAPI Security Scheme Object, as {@link securitySchemes} builds them. */
export type SecuritySchemeObject =
  | { type: 'http'; scheme: 'bearer'; bearerFormat: string; description: string }
  | {
      type: 'oauth2'
      description: string
      flows: {
        authorizationCode: AuthorizationCodeFlowObject
        deviceAuthorization?: DeviceAuthorizationFlowObject
        'x-deviceAuthorization'?: DeviceAuthorizationFlowObject
      }
    }

/**
 * What a route requires: an operation of the catalogue; `authenticated`, any valid token (the
 * listing routes: `config.access: {}` on Fastify, `authenticate` alone elsewhere); or `public`, a
 * route the policy does not guard at all (the OAuth endpoints, say).
 */
export type RouteRequirement = Operation | 'authenticated' | 'public'

/**
 * The `x-data-access` extension of an operation: what the policy checks, in words a reader (or a
 * linter, or a gateway) can act on.
 */
export type DataAccessExtension = {
  /**
   * The operation of the catalogue the route is guarded with (`table.read`…). Absent on an
   * `authenticated` or `public` route: no operation is checked there, and `requirement` says which.
   */
  operation?: Operation
  /**
   * What the route requires: its operation, or `authenticated` / `public` (see
   * {@link RouteRequirement}). Equal to `operation` where there is one; the one key every route has.
   */
  requirement: RouteRequirement
  /** The kind of resource the operation acts on, when it names one. */
  resource?: 'dataset' | 'workflow' | 'organization'
  /** The level the caller needs on it (`metadata`, `write`…), or `admin` for organizations. */
  level?: string
  /** The minimal scope: a token with it (and the user's own access) may perform the operation. */
  scope?: Scope
  /** True when the response carries data content (table rows). */
  dataContent: boolean
  /** True when the dataset's export restrictions (bytes, records, IP allow-list) apply. */
  exportRestricted: boolean
  /** Every denial code the route can answer, in the order of the denial union. */
  denials: DenyCode[]
}

/** What {@link operationSecurity} returns: the parts of an OpenAPI Operation Object the policy owns. */
export type OperationSecurity = {
  /** Alternatives: the bearer token (and OAuth) with the minimal scope; `[]` on a public route. */
  security: SecurityRequirement[]
  /** The denials the route can answer, by status: 400, 401, 403, 404, 503. */
  responses: Record<string, ResponseObject>
  /** What the policy checks (see {@link DataAccessExtension}). */
  'x-data-access': DataAccessExtension
}
