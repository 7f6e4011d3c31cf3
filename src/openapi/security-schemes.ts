import { OPERATION_NAMES, OPERATIONS, scopeForNeed } from '../decisions/operations.js'
import { SCOPE_DESCRIPTIONS } from '../decisions/scope-descriptions.js'
import { impliedScopes, SCOPES, type Scope } from '../decisions/scopes.js'
import { InvalidArgumentError } from '../errors.js'
import { TOKEN_PREFIXES, TOKEN_VALUE_LENGTH } from '../tokens/token-format.js'
import type {
  AuthorizationCodeFlowObject,
  DeviceAuthorizationFlowObject,
  OpenApiOptions,
  OpenApiVersion,
  SecuritySchemeObject,
} from './openapi-objects.js'

/**
 * The names under `components.securitySchemes` that every requirement refers to.
 *
 * @example
 * operationSecurity('table.read').security // [{ bearer: ['data.data'] }]
 */
export const SECURITY_SCHEME_NAMES = Object.freeze({ bearer: 'bearer', oauth2: 'oauth2' } as const)

/** The options after checking, with their defaults. */
export interface CheckedOptions {
  readonly openapi: OpenApiVersion
  readonly issuer: string | undefined
  readonly anonymous: boolean
}

const VERSIONS: readonly OpenApiVersion[] = ['3.0', '3.1', '3.2']

/**
 * Checks the options every function of the entry takes, so that a typo fails where the document is
 * built, naming the option.
 */
export function checkOptions(options: OpenApiOptions | undefined): CheckedOptions {
  const { openapi = '3.1', issuer, anonymous = false } = options ?? {}
  if (!VERSIONS.includes(openapi)) {
    throw new InvalidArgumentError(
      `options.openapi: expected one of ${VERSIONS.join(', ')}, got ${JSON.stringify(openapi)}`,
    )
  }
  if (issuer !== undefined && !isHttpUrl(issuer)) {
    throw new InvalidArgumentError(
      `options.issuer: expected an absolute http(s) URL, got ${JSON.stringify(issuer)}`,
    )
  }
  if (typeof anonymous !== 'boolean') {
    throw new InvalidArgumentError(`options.anonymous: expected a boolean, got ${typeof anonymous}`)
  }
  // The endpoints are paths under the issuer: a trailing slash would double.
  return { openapi, issuer: issuer?.replace(/\/+$/, ''), anonymous }
}

function isHttpUrl(value: unknown): boolean {
  if (typeof value !== 'string') return false
  try {
    const url = new URL(value)
    return (url.protocol === 'https:' || url.protocol === 'http:') && url.search === '' && url.hash === ''
  } catch {
    return false
  }
}

/** What each scope lets a token do: the contract's words, then the operations it permits. */
function scopeDescription(scope: Scope): string {
  const operations = OPERATION_NAMES.filter((operation) => {
    const minimal = scopeForNeed(OPERATIONS[operation].need)
    return minimal === scope || impliedScopes(scope).includes(minimal)
  })
  const permits =
    operations.length === 0
      ? 'On its own, the operations on public resources only.'
      : `Operations on resources hidden from the public: ${operations.join(', ')}.`
  return `${SCOPE_DESCRIPTIONS[scope]} ${permits}`
}

function scopeDescriptions(): Record<string, string> {
  return Object.fromEntries(SCOPES.map((scope) => [scope, scopeDescription(scope)]))
}

const [API_PREFIX, OAUTH_PREFIX] = [TOKEN_PREFIXES.api, TOKEN_PREFIXES.oauth]

const BEARER_DESCRIPTION =
  `An access token in the \`Authorization\` header only (RFC 6750 §2.1), over HTTPS: ` +
  `\`Authorization: Bearer <ACCESS_TOKEN>\`. A token value is ${TOKEN_VALUE_LENGTH} characters: ` +
  `\`${API_PREFIX}\` (an API token, created in the workspace settings) or \`${OAUTH_PREFIX}\` ` +
  '(an OAuth token), 32 random base62 characters and a 6-character CRC-32 checksum. Every token ' +
  'carries the `public` scope; what else it may do is limited by its other scopes.'

/**
 * `components.securitySchemes` for the bearer token and, with an issuer, the OAuth server: the
 * authorization-code flow (PKCE with S256 required) and the device flow (a standard
 * `deviceAuthorization` flow in OpenAPI 3.2, an `x-deviceAuthorization` extension before), with
 * every scope described in the contract's words and the operations of the catalogue it permits.
 *
 * @throws {InvalidArgumentError} naming a bad option (`options.issuer`, `options.openapi`).
 * @see https://spec.openapis.org/oas/v3.1.1.html#security-scheme-object
 * @example
 * const document = {
 *   openapi: '3.1.0',
 *   info: { title: 'Data API', version: '1' },
 *   components: { securitySchemes: securitySchemes({ issuer: 'https://auth.example.org' }) },
 *   paths: describeRoutes(routes, { issuer: 'https://auth.example.org' }),
 * }
 */
export function securitySchemes(options?: OpenApiOptions): Record<string, SecuritySchemeObject> {
  const { openapi, issuer } = checkOptions(options)
  const bearer: SecuritySchemeObject = {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: `${API_PREFIX}… or ${OAUTH_PREFIX}… (${TOKEN_VALUE_LENGTH} characters)`,
    description: BEARER_DESCRIPTION,
  }
  if (issuer === undefined) return { [SECURITY_SCHEME_NAMES.bearer]: bearer }
  const scopes = scopeDescriptions()
  const authorizationCode: AuthorizationCodeFlowObject = {
    authorizationUrl: `${issuer}/oauth/authorize`,
    tokenUrl: `${issuer}/oauth/token`,
    scopes,
    'x-usePkce': 'SHA-256',
  }
  const device: DeviceAuthorizationFlowObject = {
    deviceAuthorizationUrl: `${issuer}/oauth/device_authorization`,
    tokenUrl: `${issuer}/oauth/token`,
    scopes,
    'x-usePkce': 'SHA-256',
  }
  const oauth2: SecuritySchemeObject = {
    type: 'oauth2',
    description:
      'OAuth 2.0 tokens for a session: the standard flow (the user signs in on the device that ' +
      'makes the request) and the device flow (RFC 8628, for a device without a browser). Both ' +
      'require PKCE with `code_challenge_method=S256` (RFC 7636). Request the minimum scopes needed.',
    flows:
      openapi === '3.2'
        ? { authorizationCode, deviceAuthorization: device }
        : { authorizationCode, 'x-deviceAuthorization': device },
  }
  return { [SECURITY_SCHEME_NAMES.bearer]: bearer, [SECURITY_SCHEME_NAMES.oauth2]: oauth2 }
}
