import { z } from 'zod'
import {
  type AuthenticationResult,
  authenticateRequest,
  type CredentialsInput,
} from './authentication/authenticate.js'
import { type HttpDenial, renderDenial } from './authentication/http-denial.js'
import { isLoopbackAddress } from './authentication/transport.js'
import { configErrorFromZod } from './config-error.js'
import { checkResponseSize, decide, type RequestFacts } from './decisions/decide.js'
import { type Allow, type Decision, type Deny, deny } from './decisions/decision.js'
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
}

/** What an adapter knows about a request before authenticating it. */
export interface RequestContext extends CredentialsInput {
  /** `https` or `http`, as the framework's trust-proxy handling resolved it. */
  readonly protocol: string
  /** The client address, as the framework's trust-proxy handling resolved it. */
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
  now: z
    .custom<() => number>((value) => typeof value === 'function', { message: 'must be a function' })
    .default(() => Date.now),
})

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
  const { tokens, realm, allowAnonymous, requireHttps, storeTimeoutMs, now } = parsed.data
  const authOptions = {
    tokens,
    now,
    storeTimeoutMs,
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

  const policy: AccessPolicy = {
    realm,
    tokens,
    now,
    authenticate(request) {
      if (requireHttps && request.protocol !== 'https' && !isLoopbackAddress(request.clientAddress)) {
        return Promise.resolve(HTTPS_REQUIRED)
      }
      return authenticateRequest(request, authOptions)
    },
    authorize,
    async guard(principal, operation, resolve, request) {
      let resource: Resource | undefined
      try {
        resource = await resolve()
      } catch {
        return deny('service_unavailable')
      }
      return authorize(principal, operation, resource, request)
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
  return Object.freeze(policy)
}
