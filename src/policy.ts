import { z } from 'zod'
import {
  type AuthenticationResult,
  authenticateRequest,
  type CredentialsInput,
} from './authentication/authenticate.js'
import { type HttpDenial, renderDenial } from './authentication/http-denial.js'
import { isSecureTransport, type TransportFacts } from './authentication/transport.js'
import { configErrorFromZod } from './config-error.js'
import { checkResponseSize, decide, type RequestFacts } from './decisions/decide.js'
import { type Allow, type Decision, type Deny, type DenyCode, deny } from './decisions/decision.js'
import type { Operation } from './decisions/operations.js'
import { ANONYMOUS, type Principal } from './decisions/principal.js'
import type { Resource } from './decisions/resources.js'
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
  /** Milliseconds a token lookup may take before the request is answered 503. Default 2000. */
  readonly storeTimeoutMs?: number
  /** The clock, in epoch milliseconds. Default `Date.now`. */
  readonly now?: () => number
  /**
   * Told the final answer of every request an adapter authenticates or guards: the audit trail of
   * who read what. Never given a token value; a hook that throws changes no answer.
   */
  readonly onDecision?: (event: DecisionEvent) => void
  /**
   * Told of every failure behind a 503 (and of background token-store failures that change no
   * answer), with the very value thrown or rejected. A hook that throws changes no answer.
   */
  readonly onError?: (error: unknown, context: ErrorContext) => void
}

/** One answer of an adapter, as {@link AccessPolicyOptions.onDecision} hears it. */
export interface DecisionEvent {
  /** True when the request goes on to the route's handler. */
  readonly allowed: boolean
  /** 200 for an allow; the denial's status otherwise. */
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
}

/** A validated, compiled policy: the one object a host builds and hands to its adapter. */
export interface AccessPolicy {
  /** The realm of `WWW-Authenticate` challenges. */
  readonly realm: string
  /** The token store the policy authenticates against. */
  readonly tokens: TokenStore
  /** The policy's clock. */
  readonly now: () => number
  /** Transport check, then bearer authentication (design §4). Never rejects. */
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
  requireHttps: z.boolean().default(true),
  storeTimeoutMs: z.number().int().positive().max(60_000).default(2000),
  now: functionShape<() => number>().default(() => Date.now),
  onDecision: functionShape<(event: DecisionEvent) => void>().optional(),
  onError: functionShape<(error: unknown, context: ErrorContext) => void>().optional(),
})

function functionShape<F>() {
  return z.custom<F>((value) => typeof value === 'function', { message: 'must be a function' })
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

// A hook is the host's code: whatever it throws must not change the answer, nor escape into the
// request path. A throwing decision hook is itself reported; a throwing error hook is dropped.
function safeHooks(
  onDecision: AccessPolicyOptions['onDecision'],
  onError: AccessPolicyOptions['onError'],
): PolicyHooks {
  const error = (value: unknown, stage: ErrorContext['stage']): void => {
    if (onError === undefined) return
    try {
      onError(value, { stage })
    } catch {
      // Nowhere left to report it without risking a loop.
    }
  }
  if (onDecision === undefined) return { error }
  const decision = (event: DecisionEvent): void => {
    try {
      onDecision(event)
    } catch (thrown) {
      error(thrown, 'adapter')
    }
  }
  return { decision, error }
}

const HTTPS_REQUIRED: AuthenticationResult = Object.freeze({ ok: false, decision: deny('https_required') })

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
  const { tokens, realm, allowAnonymous, requireHttps, storeTimeoutMs, now, onDecision, onError } =
    parsed.data
  const hooks = safeHooks(onDecision, onError)
  const authOptions = {
    tokens,
    now,
    storeTimeoutMs,
    onError: hooks.error,
    ...(allowAnonymous ? { anonymous: ANONYMOUS } : {}),
  }

  const authorize: AccessPolicy['authorize'] = (principal, operation, resource, request) => {
    if (resource === undefined) return deny('not_found')
    return decide(
      request === undefined
        ? { principal, operation, resource }
        : { principal, operation, resource, request },
    )
  }

  const renderings = new WeakMap<Deny, HttpDenial>()

  const steps: PolicySteps = {
    hooks,
    authenticate(request) {
      if (requireHttps && !isSecureTransport(request)) return HTTPS_REQUIRED
      return authenticateRequest(request, authOptions)
    },
    guard(principal, operation, resolve, request) {
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
      // A resolver that answers synchronously (a cache hit, a constant) costs no promise: ~1 µs a
      // request on Fastify and Hono, measured with `npm run bench`.
      if (!isThenable(resource)) return authorize(principal, operation, resource, request)
      return Promise.resolve(resource).then(
        (found) => authorize(principal, operation, found, request),
        failed,
      )
    },
  }

  const policy: AccessPolicy = {
    realm,
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
        rendered = renderDenial(decision, realm)
        if (Object.isFrozen(decision)) renderings.set(decision, rendered)
      }
      return rendered
    },
  }
  Object.freeze(policy)
  stepsOf.set(policy, steps)
  return policy
}
