import type { HttpDenial } from '../authentication/http-denial.js'
import { quoteHeaderValue } from '../authentication/http-denial.js'
import { type Decision, type Deny, deny } from '../decisions/decision.js'
import { OPERATIONS, type Operation } from '../decisions/operations.js'
import type { Principal } from '../decisions/principal.js'
import type { Resource } from '../decisions/resources.js'
import type { Scope } from '../decisions/scopes.js'
import { parseScopes } from '../decisions/scopes.js'
import { type AccessPolicy, metadataUrlOf, type RequestContext } from '../policy.js'
import { type McpAnswer, type McpToolResult, toolDenial, toolResult } from './tool-results.js'
import {
  accumulatedScope,
  checkToolOperations,
  MCP_TOOL_OPERATIONS,
  type McpToolOperations,
  toolScope,
} from './tools.js'

/** Options of {@link createMcpGate}. */
export interface McpGateOptions {
  /** The policy of the MCP endpoint; its `resource` is the endpoint's URL, e.g. `https://host/mcp`. */
  readonly policy: AccessPolicy
  /** Which operation each tool performs. Default {@link MCP_TOOL_OPERATIONS}. */
  readonly tools?: McpToolOperations
  /**
   * The scope a 401 names when the request calls no tool (`initialize`, `tools/list`): what a
   * client asks for at first, before any tool asks for more. Default `data.overview`.
   */
  readonly initialScope?: Scope
  /**
   * The URL of the endpoint's RFC 9728 metadata, named by the 403 step-up challenge. Default: the one
   * RFC 9728 §3.1 derives from the policy's `resource`.
   */
  readonly resourceMetadata?: string
}

/** What the HTTP check reads of a request: the policy's request context and the parsed JSON body. */
export interface McpHttpRequest extends RequestContext {
  /** The parsed JSON-RPC body: one message or a batch; anything else calls no tool. */
  readonly body: unknown
}

/**
 * The caller's authentication in the shape of the MCP SDK's `AuthInfo`, handed to the SDK's transport
 * (`req.auth`, or `handleRequest(request, { authInfo })`) so that each tool handler receives it.
 * `token` is always empty: the library never hands a token value on.
 */
export interface McpAuthInfo {
  /** Always empty: the token value stays with the request. */
  readonly token: string
  /** The OAuth client the token was issued to; empty for an API token. */
  readonly clientId: string
  /** The token's granted scopes, `public` first. */
  readonly scopes: string[]
  /** The policy's `resource`: the endpoint the token was accepted for. */
  readonly resource?: URL
  /** The caller, for logs: the token's owner and the token's id (never its value). */
  readonly extra: { readonly userId: string | undefined; readonly tokenId: string | undefined }
}

/** What {@link McpGate.check} answers: go on to the MCP transport, or send `denial` as it is. */
export type McpCheck =
  | { readonly ok: true; readonly principal: Principal; readonly authInfo: McpAuthInfo }
  | { readonly ok: false; readonly denial: HttpDenial }

/** The MCP endpoint's guard: an HTTP check before the transport, and each tool's decision. */
export interface McpGate {
  /** The policy the gate was built with. */
  readonly policy: AccessPolicy
  /** The checked tool map. */
  readonly tools: McpToolOperations
  /**
   * Authenticates a request to the endpoint and checks the scopes of the tools it calls: 401 with
   * `resource_metadata` and `scope` without a valid token for this resource, 403
   * `insufficient_scope` naming the scopes to hold when a called tool needs one the token lacks.
   * Never rejects.
   */
  check(request: McpHttpRequest): Promise<McpCheck>
  /**
   * Decides a tool call with the policy and answers the tool result: the answer's JSON when allowed
   * (size-checked against export caps for data content), else the denial as a tool error. `authInfo`
   * is what the transport handed the tool (`extra.authInfo`), made by {@link McpGate.check}; any
   * other value is refused. Never rejects.
   */
  call(authInfo: unknown, tool: string, steps: McpToolSteps): Promise<McpToolResult>
}

const NO_SCOPES = parseScopes([])
const INVALID_TOKEN = deny('invalid_token')
const INVALID_INPUT = deny('invalid_input')
const MISSING_TOKEN = deny('missing_token')

/**
 * How a tool finds what it works on and what it answers, for the caller the gate authenticated.
 * Without `resolve` the tool decides nothing itself but filters what it answers with the policy (a
 * listing: `policy.authorize(principal, 'dataset.list', resource)` per item); only a tool whose
 * operation carries no data content may do without it.
 */
export interface McpToolSteps {
  /** Describes the tool's resource for the caller, or `undefined` when there is none (not found). */
  readonly resolve?: (principal: Principal) => Resource | undefined | Promise<Resource | undefined>
  /** The answer, run only once the policy allowed. */
  readonly answer: (principal: Principal) => McpAnswer | Promise<McpAnswer>
}

interface Caller {
  readonly principal: Principal
  readonly clientAddress: string | undefined
}

/**
 * The names of the tools a JSON-RPC message or batch calls (`tools/call`), in order.
 *
 * @example
 * calledTools([{ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_dataset' } }]) // ['get_dataset']
 */
export function calledTools(body: unknown): readonly string[] {
  const messages = Array.isArray(body) ? body : [body]
  const names: string[] = []
  for (const message of messages) {
    if (typeof message !== 'object' || message === null) continue
    const { method, params } = message as { method?: unknown; params?: unknown }
    if (method !== 'tools/call' || typeof params !== 'object' || params === null) continue
    const name = (params as { name?: unknown }).name
    if (typeof name === 'string') names.push(name)
  }
  return names
}

function withScopeParameter(denial: HttpDenial, scope: string): HttpDenial {
  // Every 401 of the policy carries a challenge; `scope` goes where the policy's own 401s put it,
  // before `resource_metadata`.
  const challenge = denial.headers['www-authenticate']!
  const at = challenge.indexOf(', resource_metadata=')
  const cut = at === -1 ? challenge.length : at
  const scoped = `${challenge.slice(0, cut)}, scope=${quoteHeaderValue(scope)}${challenge.slice(cut)}`
  return Object.freeze({
    ...denial,
    headers: Object.freeze({ ...denial.headers, 'www-authenticate': scoped }),
  })
}

// The step-up challenge (RFC 6750 §3.1): the scopes to hold, and where the resource's metadata is,
// so that a client that kept nothing from its first 401 can still find the authorization server.
function stepUp(policy: AccessPolicy, scope: string, metadata: string | undefined): HttpDenial {
  const rendered = policy.render(deny('insufficient_scope'))
  const where = metadata === undefined ? '' : `, resource_metadata=${quoteHeaderValue(metadata)}`
  const challenge = `Bearer realm=${quoteHeaderValue(policy.realm)}, error="insufficient_scope", scope=${quoteHeaderValue(scope)}${where}`
  return Object.freeze({
    ...rendered,
    headers: Object.freeze({ ...rendered.headers, 'www-authenticate': challenge }),
  })
}

function authInfoOf(policy: AccessPolicy, principal: Principal): McpAuthInfo {
  const resource = policy.resource
  return Object.freeze({
    token: '',
    clientId: principal.clientId ?? '',
    scopes: [...principal.scopes.granted],
    ...(resource === undefined ? {} : { resource: new URL(resource) }),
    extra: Object.freeze({ userId: principal.userId, tokenId: principal.tokenId }),
  })
}

// The decision of a tool call: the policy's on the resolved resource; without a resolver, an allow
// for a tool that filters its own answer, never for data content.
function decideCall(
  policy: AccessPolicy,
  caller: Caller,
  operation: Operation,
  steps: McpToolSteps,
): Decision | Promise<Decision> {
  const { resolve } = steps
  if (resolve !== undefined) {
    return policy.guard(caller.principal, operation, () => resolve(caller.principal), {
      clientAddress: caller.clientAddress,
    })
  }
  return OPERATIONS[operation].dataContent ? INVALID_INPUT : { allowed: true, operation, dataContent: false }
}

/**
 * Builds the guard of an MCP endpoint from its policy and tool map.
 *
 * @throws {InvalidArgumentError} naming a tool mapped to an operation outside the catalogue.
 * @example
 * const gate = createMcpGate({ policy: createAccessPolicy({ tokens, resource: 'https://data.example.org/mcp' }) })
 * const checked = await gate.check({ authorization: [header], protocol: 'https', clientAddress, body })
 */
export function createMcpGate(options: McpGateOptions): McpGate {
  const { policy } = options
  const tools = checkToolOperations(options.tools ?? MCP_TOOL_OPERATIONS)
  const initialScope = options.initialScope ?? 'data.overview'
  // Only the gate's own AuthInfo objects name a caller: a value a host or a client made names none.
  const callers = new WeakMap<object, Caller>()

  const refuse = (decision: Deny, needed: readonly Scope[]): McpCheck => {
    const rendered = policy.render(decision)
    if (decision.status !== 401) return { ok: false, denial: rendered }
    const scope = accumulatedScope(NO_SCOPES, needed.length > 0 ? needed : [initialScope])
    return { ok: false, denial: withScopeParameter(rendered, scope) }
  }

  const check = async (request: McpHttpRequest): Promise<McpCheck> => {
    const needed = calledTools(request.body).flatMap((name) => toolScope(tools, name) ?? [])
    const authenticated = await policy.authenticate(request)
    if (!authenticated.ok) return refuse(authenticated.decision, needed)
    const { principal } = authenticated
    if (needed.some((scope) => !principal.scopes.has(scope))) {
      if (principal.kind === 'anonymous') return refuse(MISSING_TOKEN, needed)
      const metadata = options.resourceMetadata ?? metadataUrlOf(policy.resource)
      return { ok: false, denial: stepUp(policy, accumulatedScope(principal.scopes, needed), metadata) }
    }
    const authInfo = authInfoOf(policy, principal)
    callers.set(authInfo, { principal, clientAddress: request.clientAddress })
    return { ok: true, principal, authInfo }
  }

  const call = async (authInfo: unknown, tool: string, steps: McpToolSteps): Promise<McpToolResult> => {
    const caller = typeof authInfo === 'object' && authInfo !== null ? callers.get(authInfo) : undefined
    if (caller === undefined) return toolDenial(INVALID_TOKEN)
    const operation = Object.hasOwn(tools, tool) ? tools[tool] : undefined
    if (operation === undefined) return toolDenial(INVALID_INPUT)
    const decision = await decideCall(policy, caller, operation, steps)
    return toolResult(policy, decision, () => steps.answer(caller.principal))
  }

  return Object.freeze({ policy, tools, check, call })
}
