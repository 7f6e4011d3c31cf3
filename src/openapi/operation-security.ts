import { DENY_STATUS, type DenyCode, type DenyStatus, STATUS_MESSAGES } from '../decisions/decision.js'
import { buildDecisionTables } from '../decisions/decision-tables.js'
import { OPERATION_NAMES, type Operation, operationSpec, scopeForNeed } from '../decisions/operations.js'
import type { Scope } from '../decisions/scopes.js'
import { InvalidArgumentError } from '../errors.js'
import type {
  DataAccessExtension,
  JsonSchema,
  OpenApiOptions,
  OperationSecurity,
  ResponseObject,
  RouteRequirement,
  SecurityRequirement,
} from './openapi-objects.js'
import { type CheckedOptions, checkOptions, SECURITY_SCHEME_NAMES } from './security-schemes.js'

/**
 * The name of the extension {@link operationSecurity} adds to an operation.
 *
 * @example
 * operationSecurity('table.read')[DATA_ACCESS_EXTENSION].exportRestricted // true
 */
export const DATA_ACCESS_EXTENSION = 'x-data-access'

// What authentication itself can answer on every guarded route, whatever the operation: a malformed
// header or a token sent twice, no or a bad token, plain HTTP, a token store that fails.
const AUTHENTICATION_DENIALS: readonly DenyCode[] = [
  'invalid_request',
  'missing_token',
  'invalid_token',
  'https_required',
  'service_unavailable',
]

// What guarding an operation adds on top of the decision tables: a resolver that finds no resource
// (404), describes one the policy cannot evaluate (403 `invalid_input`) or fails (503).
const RESOLVER_DENIALS: readonly DenyCode[] = ['not_found', 'invalid_input', 'service_unavailable']

const DENY_CODES = Object.keys(DENY_STATUS) as DenyCode[]

let tableDenials: ReadonlyMap<Operation, ReadonlySet<DenyCode>> | undefined

// The denials the core gives each operation across its decision tables: the core's own decisions,
// enumerated once, never a second copy of the rules.
function decisionDenials(operation: Operation): ReadonlySet<DenyCode> {
  if (tableDenials === undefined) {
    const found = new Map<Operation, Set<DenyCode>>(OPERATION_NAMES.map((name) => [name, new Set()]))
    for (const row of buildDecisionTables().decisions) {
      if (row.status !== 200) found.get(row.operation)!.add(row.code as DenyCode)
    }
    tableDenials = found
  }
  return tableDenials.get(operation)!
}

function checkRequirement(requirement: unknown): RouteRequirement {
  if (requirement === 'authenticated' || requirement === 'public') return requirement
  if (operationSpec(requirement) !== undefined) return requirement as Operation
  throw new InvalidArgumentError(
    `unknown operation ${JSON.stringify(requirement)}; expected one of ${OPERATION_NAMES.join(', ')}, 'authenticated' or 'public'`,
  )
}

/**
 * The minimal scope of an operation: the one scope that, with the user's own access, permits it on
 * a resource hidden from the public (`minimalScopes` of the operation alone, `public` aside).
 *
 * @example
 * minimalScopeOf('table.read') // 'data.data'
 * minimalScopeOf('workflow.read') // 'wokflow.read'
 */
export function minimalScopeOf(operation: Operation): Scope {
  const spec = operationSpec(operation)
  if (spec === undefined) {
    throw new InvalidArgumentError(
      `unknown operation ${JSON.stringify(operation)}; expected one of ${OPERATION_NAMES.join(', ')}`,
    )
  }
  return scopeForNeed(spec.need)
}

function requirementScope(requirement: RouteRequirement): Scope | undefined {
  if (requirement === 'public') return undefined
  return requirement === 'authenticated' ? 'public' : minimalScopeOf(requirement)
}

function security(scope: Scope | undefined, options: CheckedOptions): SecurityRequirement[] {
  if (scope === undefined) return []
  // Before 3.1, a requirement on a scheme other than OAuth must list no scopes.
  const bearer: SecurityRequirement = {
    [SECURITY_SCHEME_NAMES.bearer]: options.openapi === '3.0' ? [] : [scope],
  }
  const alternatives: SecurityRequirement[] = [bearer]
  if (options.issuer !== undefined) alternatives.push({ [SECURITY_SCHEME_NAMES.oauth2]: [scope] })
  // An empty requirement: no credentials at all is accepted, as the `public`-only caller.
  if (options.anonymous) alternatives.push({})
  return alternatives
}

function denialsOf(requirement: RouteRequirement, options: CheckedOptions): DenyCode[] {
  if (requirement === 'public') return []
  const codes = new Set<DenyCode>(AUTHENTICATION_DENIALS)
  // An anonymous caller is admitted: a request without credentials is never 401.
  if (options.anonymous) codes.delete('missing_token')
  if (requirement !== 'authenticated') {
    for (const code of decisionDenials(requirement)) codes.add(code)
    for (const code of RESOLVER_DENIALS) codes.add(code)
    if (operationSpec(requirement)!.dataContent) codes.add('export_restricted')
  }
  return DENY_CODES.filter((code) => codes.has(code))
}

const STATUS_DESCRIPTIONS: Readonly<Record<DenyStatus, string>> = {
  400: 'A malformed `Authorization` header, two of them, or a token also sent as `access_token`.',
  401: 'No bearer token, or one that is malformed, unknown, expired or revoked.',
  403: 'Denied by the policy.',
  404: 'The resource does not exist, or the caller may not learn that it does.',
  429: 'The token store refused to look up more unknown tokens from this network for now; `Retry-After` says when to try again.',
  503: 'A token store or resource lookup failed or timed out; the request was not allowed.',
}

const CODE_DESCRIPTIONS: Readonly<Record<DenyCode, string>> = {
  invalid_request: 'malformed credentials',
  missing_token: 'no credentials (the challenge carries no error code)',
  invalid_token: 'a malformed, unknown, expired or revoked token',
  invalid_dpop_proof: 'the DPoP proof of a DPoP-bound token fails a check of RFC 9449',
  use_dpop_nonce: 'the DPoP proof lacks the current server nonce (`DPoP-Nonce` names it)',
  https_required: 'plain HTTP from a client that is not on loopback',
  insufficient_scope: "the user could, with a wider token scope (the challenge's `scope` names it)",
  insufficient_access: "the user's own access falls short, whatever the scopes",
  export_restricted: "the dataset's export restrictions forbid this transfer of data content",
  invalid_input: 'a resource description the policy cannot evaluate',
  not_found: 'no such resource, or one hidden from the caller',
  rate_limited: "the token store's lookup budget for the client's network is spent",
  service_unavailable: 'a store or lookup failure',
}

function denialBody(status: DenyStatus, codes: readonly DenyCode[]): JsonSchema {
  return {
    type: 'object',
    description: 'The denial: its status, the public message of the status and the stable code.',
    required: ['error'],
    additionalProperties: false,
    properties: {
      error: {
        type: 'object',
        required: ['status', 'message', 'code'],
        additionalProperties: false,
        properties: {
          status: { type: 'integer', enum: [status] },
          message: { type: 'string', enum: [STATUS_MESSAGES[status]] },
          code: {
            type: 'string',
            enum: [...codes],
            description: codes.map((code) => `\`${code}\`: ${CODE_DESCRIPTIONS[code]}`).join('; '),
          },
        },
      },
    },
  }
}

// RFC 6750 §3: a challenge on every 401 and on malformed credentials; on a 403 only for scope.
function challenge(status: DenyStatus, codes: readonly DenyCode[]): ResponseObject['headers'] {
  const always = status === 400 || status === 401
  if (!always && !codes.includes('insufficient_scope')) return undefined
  return {
    'WWW-Authenticate': {
      description: always
        ? 'The bearer challenge (RFC 6750 §3): `Bearer realm="…"`, with `error` when credentials were sent.'
        : 'On `insufficient_scope` only: `Bearer error="insufficient_scope", scope="…"`, naming the scope that would suffice.',
      ...(always ? { required: true } : {}),
      schema: { type: 'string' },
    },
  }
}

function responses(codes: readonly DenyCode[]): Record<string, ResponseObject> {
  const byStatus = new Map<DenyStatus, DenyCode[]>()
  for (const code of codes) {
    const status = DENY_STATUS[code]
    byStatus.set(status, [...(byStatus.get(status) ?? []), code])
  }
  const result: Record<string, ResponseObject> = {}
  for (const status of [...byStatus.keys()].sort()) {
    const statusCodes = byStatus.get(status)!
    const headers = challenge(status, statusCodes)
    result[String(status)] = {
      description: `${STATUS_MESSAGES[status]}. ${STATUS_DESCRIPTIONS[status]}`,
      ...(headers === undefined ? {} : { headers }),
      content: { 'application/json': { schema: denialBody(status, statusCodes) } },
    }
  }
  return result
}

function extension(requirement: RouteRequirement, codes: DenyCode[]): DataAccessExtension {
  const spec = operationSpec(requirement)
  if (spec === undefined) {
    const scope = requirementScope(requirement)
    return {
      requirement,
      ...(scope === undefined ? {} : { scope }),
      dataContent: false,
      exportRestricted: false,
      denials: codes,
    }
  }
  const { need } = spec
  return {
    operation: requirement as Operation,
    requirement,
    resource: need.kind,
    level: need.kind === 'organization' ? 'admin' : need.level,
    scope: minimalScopeOf(requirement as Operation),
    dataContent: spec.dataContent,
    exportRestricted: spec.dataContent,
    denials: codes,
  }
}

/**
 * The parts of an OpenAPI Operation Object that the policy owns, for one route: its `security`
 * (the bearer token, or OAuth with an issuer, with the operation's minimal scope; `public` routes
 * say `[]`), its denial `responses` (400, 401, 403, 404, 503, each with the denial body's schema,
 * the codes it can carry and the `WWW-Authenticate` challenge) and `x-data-access` (the operation,
 * the level it needs, whether it is data content and export-restricted). Everything is derived
 * from the operation catalogue and the core's own decisions.
 *
 * @param requirement - an operation of the catalogue, `authenticated` or `public`.
 * @throws {InvalidArgumentError} naming an unknown operation or a bad option.
 * @example
 * const { security, responses } = operationSecurity('dataset.metadata')
 * security // [{ bearer: ['data.metadata'] }]
 * Object.keys(responses) // ['400', '401', '403', '404', '503']
 */
export function operationSecurity(
  requirement: RouteRequirement,
  options?: OpenApiOptions,
): OperationSecurity {
  const checked = checkOptions(options)
  const route = checkRequirement(requirement)
  const codes = denialsOf(route, checked)
  return {
    security: security(requirementScope(route), checked),
    responses: responses(codes),
    [DATA_ACCESS_EXTENSION]: extension(route, codes),
  }
}

/**
 * Adds what the policy owns to an operation the host describes, the host's own fields winning
 * where both set one (a response status the host describes stays the host's): the one helper for
 * `createRoute` of `@hono/zod-openapi`, `describeRoute` of `hono-openapi`, or any OpenAPI
 * Operation Object.
 *
 * @throws {InvalidArgumentError} naming an unknown operation or a bad option.
 * @example
 * const route = createRoute(
 *   withOperationSecurity('dataset.metadata', {
 *     method: 'get',
 *     path: '/datasets/{owner}/{name}/metadata',
 *     responses: { 200: { description: 'The metadata' } },
 *   }),
 * )
 */
export function withOperationSecurity<T extends object>(
  requirement: RouteRequirement,
  operation: T,
  options?: OpenApiOptions,
): T & OperationSecurity {
  const owned = operationSecurity(requirement, options)
  const host = operation as Partial<OperationSecurity>
  return {
    ...owned,
    ...operation,
    security: host.security ?? owned.security,
    responses: { ...owned.responses, ...host.responses },
  }
}
