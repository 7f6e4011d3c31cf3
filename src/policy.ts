import { z } from 'zod'
import {
  type AuthenticationResult,
  authenticateRequest,
  type CredentialsInput,
} from './authentication/authenticate.js'
import { type HttpDenial, renderDenial } from './authentication/http-denial.js'
import { isSecureTransport, type TransportFacts } from './authentication/transport.js'
import { configErrorFromZod } from './config-error.js'
import { functionShape, isSecureEndpointUrl } from './config-shapes.js'
import { checkResponseSize, decideRequest, type RequestFacts } from './decisions/decide.js'
import { type Allow, type Decision, type Deny, type DenyCode, deny } from './decisions/decision.js'
import type { Operation } from './decisions/operations.js'
import { ANONYMOUS, type Principal } from './decisions/principal.js'
import type { Resource } from './decisions/resources.js'
import { compileDpopCheck, type DpopPolicyOptions, dpopOptionsSchema } from './dpop/policy-options.js'
import { ConfigError } from './errors.js'
import { DEFAULT_IPV6_NETWORK_PREFIX } from './restrictions/client-network.js'
import { isResourceIdentifier, RESOURCE_IDENTIFIER_RULE } from './tokens/audience.js'
import type { TokenStore } from './tokens/token-store.js'

/** Options of {@link createAccessPolicy}. */
export interface AccessPolicyOptions {
  /** Where token records live: a `MemoryTokenStore`, or a shared store for several instances. */
  readonly tokens: TokenStore
  /** The realm named in `WWW-Authenticate` challenges. Default `data-api`. */
  readonly realm?: string
  /** Treat requests without credentials as the `public`-only anonymous caller. Default false. */
  readonly allowAnonymous?: boolean
  /** Refuse plain HTTP from non-loopback clients (403). Default true. */
  readonly requireHttps?: boolean
  /**
   * The resource identifier of the API this policy guards (RFC 8707, RFC 9728 §2), e.g.
   * `https://data.example.org/api/v1`: an absolute http(s) URI without fragment. A token bound to
   * other resources (its record's `audience`) is refused with 401 `invalid_token` before any
   * decision; a token without an audience is accepted as before. Without `resource`, every token
   * that carries an audience is refused: a guard that does not know what it protects cannot tell
   * a token meant for someone else. With `resource` and no `resourceMetadata`, the challenges name
   * the metadata URL RFC 9728 §3.1 derives from it. A function answering it serves a host that
   * learns its address only once it listens: it is called at first need and its answer, checked
   * then, is kept (a bad one goes to `onError`, and audience-bound tokens are then refused).
   * Default: none.
   */
  readonly resource?: string | (() => string)
  /**
   * The URL of this API's protected-resource metadata (RFC 9728), e.g.
   * `https://data.example.org/.well-known/oauth-protected-resource/api/v1`: every 401 challenge then
   * carries `resource_metadata="…"`, so a client that starts from a 401 finds the authorization
   * server. An absolute `https` URL (`http` only for a loopback host), without fragment or user
   * info. A function answering it serves a host that learns its address only once it listens: it
   * is called at the first 401, and its answer, checked then, is kept (a bad one goes to `onError`
   * and the challenges go without it). Default: none.
   */
  readonly resourceMetadata?: string | (() => string)
  /** Milliseconds a token lookup may take before the request is answered 503. Default 2000. */
  readonly storeTimeoutMs?: number
  /** The clock, in epoch milliseconds. Default `Date.now`. */
  readonly now?: () => number
  /**
   * The length of the IPv6 network recorded beside a token's last use (`lastUsedFrom`): the owner
   * sees where a token was used as a network, never as one address, and a host that counts its
   * clients per network (its rate limits) passes the same length so that both name the same
   * network. An integer from 1 to 128; IPv4 addresses are recorded whole. Default 64 (one
   * customer's network, RFC 6177).
   */
  readonly ipv6Prefix?: number
  /**
   * Told of every request an adapter authenticates or guards, once its response is done: the audit
   * trail of who read what. Exactly one event per request a policy's adapter handled, with the
   * status actually sent (for an allow, the route's or the framework's answer, not the policy's). Never given a token value; a hook that throws (or an
   * `async` one that rejects) changes no answer and is reported to `onError`.
   */
  readonly onDecision?: (event: DecisionEvent) => void
  /**
   * Told of every failure behind a 503 (and of background token-store failures that change no
   * answer), with the very value thrown or rejected. A hook that throws (or an `async` one that
   * rejects) changes no answer; its failure is dropped.
   */
  readonly onError?: (error: unknown, context: ErrorContext) => void
  /**
   * How DPoP proofs (RFC 9449) are checked. A DPoP-bound token (its record's `dpopJkt`) is always
   * refused without a good proof by its key, whatever this says: the option only tunes the check.
   * Default: every algorithm of `DPOP_ALGORITHMS`, a 300 s window, 30 s of leeway, a
   * `MemoryDpopReplayCache` of the policy's own, no server nonces, and the origin of `resource`.
   */
  readonly dpop?: DpopPolicyOptions
}

/** One answer of an adapter, as {@link AccessPolicyOptions.onDecision} hears it. */
export interface DecisionEvent {
  /** True when the policy let the request go on (to the route's handler, or the host's next step). */
  readonly allowed: boolean
  /**
   * The status of the response actually sent: the denial's for a denial; for an allow, what the
   * route (or the framework: a body it could not parse, say) answered.
   */
  readonly status: number
  /** The denial's stable reason. */
  readonly code?: DenyCode
  /** The operation the route required, once authentication succeeded. */
  readonly operation?: Operation
  /** The authenticated user. */
  readonly userId?: string
  /** The id (never the value) of the token that authenticated the request. */
  readonly tokenId?: string
  /** The client address, as the adapter's trusted-proxy handling resolved it. */
  readonly clientAddress?: string
}

/** Where a failure reported to {@link AccessPolicyOptions.onError} happened. */
export interface ErrorContext {
  /** `store`: the token store; `resolver`: the host's resource resolver; `adapter`: anything else. */
  readonly stage: 'store' | 'resolver' | 'adapter'
}

/** What an adapter knows about a request before authenticating it. */
export interface RequestContext extends CredentialsInput, TransportFacts {
  readonly clientAddress: string | undefined
  readonly protocol: string
}

/** A validated, compiled policy: the one object a host builds and hands to its adapter. */
export interface AccessPolicy {
  /** The realm of `WWW-Authenticate` challenges. */
  readonly realm: string
  /**
   * The resource identifier this policy guards, when it declares one (the RFC 9728 `resource`);
   * a function option is asked at the first read.
   */
  readonly resource: string | undefined
  /** The token store the policy authenticates against. */
  readonly tokens: TokenStore
  /** The policy's clock. */
  readonly now: () => number
  /** Transport check, then bearer authentication (docs/authentication.md). Never rejects. */
  authenticate(request: RequestContext): Promise<AuthenticationResult>
  /** Decides an operation on a resource; `undefined` (no such resource) is 404. */
  authorize(
    principal: Principal,
    operation: Operation,
    resource: Resource | undefined,
    request?: RequestFacts,
  ): Decision
  /**
   * Resolves the resource with the host's resolver, then decides. A resolver that throws or
   * rejects is 503, never an allow; one that answers `undefined` is 404.
   */
  guard(
    principal: Principal,
    operation: Operation,
    resolve: () => Resource | undefined | Promise<Resource | undefined>,
    request?: RequestFacts,
  ): Promise<Decision>
  /** Checks a data-content response's declared size against an allow's limits. */
  checkResponseSize(decision: Allow, size: { readonly records?: number; readonly bytes?: number }): Decision
  /** Renders a denial as status, headers and body, identical on every framework. */
  render(decision: Deny): HttpDenial
}

const RESOURCE_METADATA_RULE =
  'must be an absolute https URL (http only on a loopback host) of printable ASCII, without quotes, user info or fragment'

const tokenStoreShape = z.custom<TokenStore>(
  (value) =>
    typeof value === 'object' &&
    value !== null &&
    ['findByHash', 'findById', 'save', 'update', 'listByOwner', 'touch'].every(
      (method) => typeof (value as Record<string, unknown>)[method] === 'function',
    ),
  { message: 'must be a TokenStore (findByHash, findById, save, update, listByOwner, touch)' },
)

const optionsSchema = z.strictObject({
  tokens: tokenStoreShape,
  realm: z
    .string()
    .regex(/^[\x20-\x7e]{1,200}$/, 'must be 1–200 printable ASCII characters')
    .default('data-api'),
  allowAnonymous: z.boolean().default(false),
  resourceMetadata: z
    .union([
      z.string().refine(isResourceMetadataUrl, { message: RESOURCE_METADATA_RULE }),
      functionShape<() => string>(),
    ])
    .optional(),
  requireHttps: z.boolean().default(true),
  resource: z
    .custom<string | (() => string)>((value) => typeof value === 'function' || isResourceIdentifier(value), {
      message: `${RESOURCE_IDENTIFIER_RULE}, or a function answering one`,
    })
    .optional(),
  storeTimeoutMs: z.number().int().positive().max(60_000).default(2000),
  now: functionShape<() => number>().default(() => Date.now),
  ipv6Prefix: z.number().int().min(1).max(128).default(DEFAULT_IPV6_NETWORK_PREFIX),
  onDecision: functionShape<(event: DecisionEvent) => void>().optional(),
  onError: functionShape<(error: unknown, context: ErrorContext) => void>().optional(),
  dpop: dpopOptionsSchema,
})

// RFC 9728 §3: the metadata of a resource is fetched over TLS; plain http only where nothing
// leaves the machine. The value goes into a quoted-string, so it is kept to printable ASCII without
// quotes or backslashes.
function isResourceMetadataUrl(value: string): boolean {
  return /^[\x21\x23-\x5b\x5d-\x7e]{1,2000}$/.test(value) && isSecureEndpointUrl(value)
}

/**
 * Where RFC 9728 §3.1 puts the metadata of `resource`: `/.well-known/oauth-protected-resource`
 * inserted between the origin and the path (a query kept). Undefined for a resource whose derived
 * URL would not be one a challenge may name (plain http off loopback).
 *
 * @example
 * metadataUrlOf('https://data.example.org/api/v1')
 * // 'https://data.example.org/.well-known/oauth-protected-resource/api/v1'
 */
export function metadataUrlOf(resource: string | undefined): string | undefined {
  if (resource === undefined) return undefined
  const url = new URL(resource)
  const path = url.pathname === '/' ? '' : url.pathname
  const metadata = `${url.origin}/.well-known/oauth-protected-resource${path}${url.search}`
  return isResourceMetadataUrl(metadata) ? metadata : undefined
}

// A URL option, once known: a string at once, a function's answer at its first use, checked then
// and kept (a bad answer goes to `onError`, and the option counts as absent: fail closed).
function lazyOption(
  option: string | (() => string) | undefined,
  name: 'resource' | 'resourceMetadata',
  check: (value: string) => boolean,
  rule: string,
  hooks: PolicyHooks,
): () => string | undefined {
  if (typeof option !== 'function') return () => option
  let source: (() => string) | undefined = option
  let resolved: string | undefined
  return () => {
    if (source === undefined) return resolved
    const ask = source
    source = undefined
    try {
      const value = ask()
      if (typeof value !== 'string' || !check(value)) {
        throw new ConfigError(['options', name], `answered ${JSON.stringify(value)}, which ${rule}`)
      }
      resolved = value
    } catch (error) {
      hooks.error(error, 'adapter')
    }
    return resolved
  }
}

/** The hooks an adapter reports to; internal to the package (not exported from its entry points). */
export interface PolicyHooks {
  /** Absent when the host set no `onDecision`, so that no event is built for nobody. */
  readonly decision?: (event: DecisionEvent) => void
  readonly error: (error: unknown, stage: ErrorContext['stage']) => void
}

/**
 * What the admission sequence runs of a policy: its hooks, and `authenticate` and `guard` answering
 * synchronously whenever the store and the resolver do. Internal to the package.
 */
export interface PolicySteps {
  readonly hooks: PolicyHooks
  authenticate(request: RequestContext): AuthenticationResult | Promise<AuthenticationResult>
  guard(
    principal: Principal,
    operation: Operation,
    resolve: () => Resource | undefined | PromiseLike<Resource | undefined>,
    request?: RequestFacts,
  ): Decision | Promise<Decision>
}

const stepsOf = new WeakMap<AccessPolicy, PolicySteps>()

const NO_HOOKS: PolicyHooks = Object.freeze({ error() {} })

/**
 * The hooks of a policy built by {@link createAccessPolicy}; a policy-shaped object from elsewhere
 * has none.
 *
 * @example
 * policyHooks(policy).error(new Error('lost'), 'adapter')
 */
export function policyHooks(policy: AccessPolicy): PolicyHooks {
  return stepsOf.get(policy)?.hooks ?? NO_HOOKS
}

/**
 * The steps of a policy built by {@link createAccessPolicy}; a policy-shaped object from elsewhere
 * (a host's wrapper, a test double) is run through its public, promise-returning methods.
 *
 * @example
 * const result = policySteps(policy).authenticate({ authorization: [header], protocol: 'https' })
 */
export function policySteps(policy: AccessPolicy): PolicySteps {
  return (
    stepsOf.get(policy) ?? {
      hooks: NO_HOOKS,
      authenticate: (request) => policy.authenticate(request),
      guard: (principal, operation, resolve, request) =>
        policy.guard(principal, operation, () => Promise.resolve(resolve()), request),
    }
  )
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    (typeof value === 'object' || typeof value === 'function') &&
    value !== null &&
    typeof (value as { then?: unknown }).then === 'function'
  )
}

// A hook is the host's code: whatever it throws, or whatever its promise rejects with (an `async`
// hook), must not change the answer, nor escape into the request path or the process (an unhandled
// rejection ends a Node process). A failing decision hook is itself reported; a failing error hook
// is dropped.
function safeHooks(
  onDecision: AccessPolicyOptions['onDecision'],
  onError: AccessPolicyOptions['onError'],
): PolicyHooks {
  const error = (value: unknown, stage: ErrorContext['stage']): void => {
    if (onError === undefined) return
    try {
      settleQuietly(onError(value, { stage }), IGNORE)
    } catch {
      // Nowhere left to report it without risking a loop.
    }
  }
  if (onDecision === undefined) return { error }
  const reportDecisionHook = (thrown: unknown): void => error(thrown, 'adapter')
  const decision = (event: DecisionEvent): void => {
    try {
      settleQuietly(onDecision(event), reportDecisionHook)
    } catch (thrown) {
      reportDecisionHook(thrown)
    }
  }
  return { decision, error }
}

// Nowhere left to report a failing error hook without risking a loop.
const IGNORE = (): void => {}

// A hook typed to return nothing may still return a promise (an `async` function): its rejection
// goes to `failed`, never to the process. A thenable whose `then` throws is the hook's failure too.
function settleQuietly(result: unknown, failed: (error: unknown) => void): void {
  if (isThenable(result)) result.then(undefined, failed)
}

const HTTPS_REQUIRED: AuthenticationResult = Object.freeze({ ok: false, decision: deny('https_required') })
const NOT_FOUND = deny('not_found')

// The guard step: resolves the resource with the host's resolver, then decides. A resolver that
// throws or rejects is reported to the error hook and answered 503, never an allow.
function guardStep(authorize: AccessPolicy['authorize'], hooks: PolicyHooks): PolicySteps['guard'] {
  return (principal, operation, resolve, request) => {
    const failed = (error: unknown): Decision => {
      hooks.error(error, 'resolver')
      return deny('service_unavailable')
    }
    let resource: Resource | undefined | PromiseLike<Resource | undefined>
    try {
      resource = resolve()
    } catch (error) {
      return failed(error)
    }
    // A resolver that answers synchronously (a cache hit, a constant) costs no promise, a gain
    // measured by `npm run bench` on Fastify and Hono.
    if (!isThenable(resource)) return authorize(principal, operation, resource, request)
    return Promise.resolve(resource).then((found) => authorize(principal, operation, found, request), failed)
  }
}

/**
 * Builds the access policy from validated options. Everything is checked here, once; requests
 * are then decided without any further validation of the configuration.
 *
 * @throws {ConfigError} naming the offending option, e.g. `options.realm: must be …`.
 * @example
 * const policy = createAccessPolicy({ tokens: new MemoryTokenStore(), realm: 'data-api' })
 */
export function createAccessPolicy(options: AccessPolicyOptions): AccessPolicy {
  const parsed = optionsSchema.safeParse(options)
  if (!parsed.success) throw configErrorFromZod(parsed.error, ['options'])
  const {
    tokens,
    realm,
    allowAnonymous,
    requireHttps,
    resource,
    storeTimeoutMs,
    now,
    ipv6Prefix,
    onDecision,
    onError,
  } = parsed.data
  const hooks = safeHooks(onDecision, onError)
  const resourceOf = lazyOption(resource, 'resource', isResourceIdentifier, RESOURCE_IDENTIFIER_RULE, hooks)

  const dpop = compileDpopCheck(parsed.data.dpop, resourceOf)
  const authOptions = {
    dpop,
    tokens,
    now,
    storeTimeoutMs,
    ipv6Prefix,
    onError: hooks.error,
    ...(allowAnonymous ? { anonymous: ANONYMOUS } : {}),
    ...(resource !== undefined && { resource: resourceOf }),
  }

  // The decision's fields as arguments: no input object per request.
  const authorize: AccessPolicy['authorize'] = (principal, operation, resource, request) =>
    resource === undefined ? NOT_FOUND : decideRequest(principal, operation, resource, request)

  const renderings = new WeakMap<Deny, HttpDenial>()
  // Without a metadata URL of its own, the policy names the one RFC 9728 §3.1 derives from its resource.
  const metadataUrl =
    parsed.data.resourceMetadata === undefined
      ? () => metadataUrlOf(resourceOf())
      : lazyOption(
          parsed.data.resourceMetadata,
          'resourceMetadata',
          isResourceMetadataUrl,
          RESOURCE_METADATA_RULE,
          hooks,
        )

  const steps: PolicySteps = {
    hooks,
    authenticate(request) {
      if (requireHttps && !isSecureTransport(request)) return HTTPS_REQUIRED
      return authenticateRequest(request, authOptions)
    },
    guard: guardStep(authorize, hooks),
  }

  const policy: AccessPolicy = {
    realm,
    get resource() {
      return resourceOf()
    },
    tokens,
    now,
    authenticate: (request) => Promise.resolve(steps.authenticate(request)),
    authorize,
    guard(principal, operation, resolve, request) {
      try {
        return Promise.resolve(steps.guard(principal, operation, resolve, request))
      } catch (error) {
        return Promise.reject(error)
      }
    },
    checkResponseSize,
    render(decision: Deny) {
      // Denials are shared frozen values (`deny()`), so each is rendered once, not per request.
      let rendered = renderings.get(decision)
      if (rendered === undefined) {
        rendered = renderDenial(
          decision,
          realm,
          decision.status === 401 ? metadataUrl() : undefined,
          dpop.algorithms,
        )
        if (Object.isFrozen(decision)) renderings.set(decision, rendered)
      }
      return rendered
    },
  }
  Object.freeze(policy)
  stepsOf.set(policy, steps)
  return policy
}
