import type { HttpDenial } from '../authentication/http-denial.js'
import { quoteHeaderValue } from '../authentication/http-denial.js'
import { type Decision, type Deny, deny } from '../decisions/decision.js'
import type { Principal } from '../decisions/principal.js'
import type { Resource } from '../decisions/resources.js'
import type { Scope } from '../decisions/scopes.js'
import { parseScopes } from '../decisions/scopes.js'
import { type AccessPolicy, metadataUrlOf, type RequestContext } from '../policy.js'
import { type McpAnswer, type McpToolResult, toolResult } from './tool-results.js'
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
  readonly token: string
  readonly clientId: string
  readonly scopes: string[]
  readonly resource?: URL
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
   * (size-checked against export caps for data content), else the denial as a tool error. Never rejects.
   */
  call(
    authInfo: unknown,
    tool: string,
    resolve: () => Resource | undefined | Promise<Resource | undefined>,
    answer: () => McpAnswer | Promise<McpAnswer>,
  ): Promise<McpToolResult>
}

const NO_SCOPES = parseScopes([])

interface Caller {
  readonly principal: Principal
  readonly clientAddress: string | undefined
}

/** The names of the tools a JSON-RPC message or batch calls (`tools/call`), in order. */
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
  const challenge = denial.headers['www-authenticate']
  if (challenge === undefined || scope === '') return denial
  return Object.freeze({
    ...denial,
    headers: Object.freeze({
      ...denial.headers,
      'www-authenticate': `${challenge}, scope=${quoteHeaderValue(scope)}`,
    }),
  })
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
  const callers = new WeakMap<object, Caller>()
  const metadata = (): string | undefined => options.resourceMetadata ?? metadataUrlOf(policy.resource)

  const stepUp = (scope: string): HttpDenial => {
    const rendered = policy.render(deny('insufficient_scope'))
    const url = metadata()
    const challenge = `Bearer realm=${quoteHeaderValue(policy.realm)}, error="insufficient_scope", scope=${quoteHeaderValue(scope)}${url === undefined ? '' : `, resource_metadata=${quoteHeaderValue(url)}`}`
    return Object.freeze({
      ...rendered,
      headers: Object.freeze({ ...rendered.headers, 'www-authenticate': challenge }),
    })
  }

  const check = async (request: McpHttpRequest): Promise<McpCheck> => {
    const needed = calledTools(request.body).flatMap((name) => toolScope(tools, name) ?? [])
    const authenticated = await policy.authenticate(request)
    if (!authenticated.ok) return refuse(authenticated.decision, needed)
    const { principal } = authenticated
    const lacking = needed.filter((scope) => !principal.scopes.has(scope))
    if (lacking.length > 0) {
      if (principal.kind === 'anonymous') return refuse(deny('missing_token'), needed)
      return { ok: false, denial: stepUp(accumulatedScope(principal.scopes, needed)) }
    }
    const resource = policy.resource
    const authInfo: McpAuthInfo = Object.freeze({
      token: '',
      clientId: principal.clientId ?? '',
      scopes: [...principal.scopes.granted],
      ...(resource === undefined ? {} : { resource: new URL(resource) }),
      extra: Object.freeze({ userId: principal.userId, tokenId: principal.tokenId }),
    })
    callers.set(authInfo, { principal, clientAddress: request.clientAddress })
    return { ok: true, principal, authInfo }
  }

  const refuse = (decision: Deny, needed: readonly Scope[]): McpCheck => {
    const rendered = policy.render(decision)
    const scope =
      decision.status === 401 ? accumulatedScope(NO_SCOPES, needed.length > 0 ? needed : [initialScope]) : ''
    return { ok: false, denial: withScopeParameter(rendered, scope) }
  }

  const call: McpGate['call'] = async (authInfo, tool, resolve, answer) => {
    const caller = typeof authInfo === 'object' && authInfo !== null ? callers.get(authInfo) : undefined
    const operation = Object.hasOwn(tools, tool) ? tools[tool] : undefined
    if (caller === undefined || operation === undefined)
      return toolResult(policy, deny(caller === undefined ? 'invalid_token' : 'invalid_input'), answer)
    const decision: Decision = await policy.guard(caller.principal, operation, resolve, {
      clientAddress: caller.clientAddress,
    })
    return toolResult(policy, decision, answer)
  }

  return Object.freeze({ policy, tools, check: (request: McpHttpRequest) => check(request), call })
}
