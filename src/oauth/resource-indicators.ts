import { ConfigError } from '../errors.js'
import { isResourceIdentifier, MAX_AUDIENCE_SIZE, RESOURCE_IDENTIFIER_RULE } from '../tokens/audience.js'
import { OAuthError } from './oauth-error.js'
import type { OAuthParams } from './oauth-params.js'

/**
 * The resources an authorization server issues tokens for (RFC 8707): every resource identifier a
 * request may name in `resource`, and the one a request that names none gets. The same shape goes
 * to `validateAuthorizationRequest`, `startDeviceAuthorization`, `handleDeviceAuthorizationRequest`
 * and `handleTokenRequest` as their `resources` option.
 *
 * Identifiers are absolute `http`/`https` URIs without fragment, compared as strings, exactly.
 *
 * @example
 * const resources: KnownResources = {
 *   known: ['https://data.example.org/api/v1', 'https://reports.example.org/'],
 *   defaultResource: 'https://data.example.org/api/v1',
 * }
 * @see https://www.rfc-editor.org/rfc/rfc8707#section-2
 */
export type KnownResources = {
  /** Every resource a token may be issued for; at least one. */
  readonly known: readonly string[]
  /** The audience of a request without `resource`; one of `known`. */
  readonly defaultResource: string
}

/** {@link KnownResources}, checked; internal to the package. */
export type CompiledResources = {
  readonly known: ReadonlySet<string>
  readonly defaultAudience: readonly string[]
}

// Hosts pass the same object on every request: it is checked once, then looked up.
const compiled = new WeakMap<KnownResources, CompiledResources>()

/**
 * Checks a {@link KnownResources} option; internal to the package.
 *
 * @throws {ConfigError} naming `resources.known[i]` or `resources.defaultResource`.
 */
export function compileKnownResources(resources: KnownResources | undefined): CompiledResources | undefined {
  if (resources === undefined) return undefined
  const cached = compiled.get(resources)
  if (cached !== undefined) return cached
  const known = (resources as { known?: unknown } | null)?.known
  if (!Array.isArray(known) || known.length === 0) {
    throw new ConfigError(['resources', 'known'], 'must be a non-empty list of resource identifiers')
  }
  known.forEach((resource: unknown, index) => {
    if (!isResourceIdentifier(resource)) {
      throw new ConfigError(
        ['resources', 'known', index],
        `${RESOURCE_IDENTIFIER_RULE}; got ${JSON.stringify(resource)}`,
      )
    }
  })
  const defaultResource: unknown = resources.defaultResource
  if (typeof defaultResource !== 'string' || !known.includes(defaultResource)) {
    throw new ConfigError(
      ['resources', 'defaultResource'],
      `must be one of resources.known; got ${JSON.stringify(defaultResource)}`,
    )
  }
  const result = { known: new Set<string>(known), defaultAudience: Object.freeze([defaultResource]) }
  compiled.set(resources, result)
  return result
}

function invalidTarget(description: string): OAuthError {
  return new OAuthError('invalid_target', description)
}

/**
 * The `resource` values of a request (RFC 8707 §2: repeatable), checked against what the server
 * knows, duplicates dropped, in the order given; `undefined` when the request names none (empty
 * values count as absent, as for every parameter). Internal to the package.
 *
 * @throws {OAuthError} `invalid_target` for a malformed or unknown resource, or too many.
 */
export function readRequestedResources(
  params: OAuthParams,
  resources: CompiledResources | undefined,
): readonly string[] | undefined {
  const raw: unknown = Object.hasOwn(params, 'resource') ? params.resource : undefined
  const values = (Array.isArray(raw) ? raw : [raw]).filter((value) => value !== undefined && value !== '')
  if (values.length === 0) return undefined
  const seen = new Set<string>()
  for (const value of values) {
    if (!isResourceIdentifier(value)) {
      throw invalidTarget(
        `resource ${RESOURCE_IDENTIFIER_RULE}; got ${JSON.stringify(String(value).slice(0, 200))}`,
      )
    }
    if (resources === undefined || !resources.known.has(value)) {
      throw invalidTarget(`resource ${value} is not a resource this server issues tokens for`)
    }
    seen.add(value)
  }
  if (seen.size > MAX_AUDIENCE_SIZE) {
    throw invalidTarget(`at most ${MAX_AUDIENCE_SIZE} resources may be requested at once`)
  }
  return [...seen]
}

/**
 * The audience an authorization (code or device) grants: the requested resources, else the
 * server's default resource, else none (a host that declared no resources issues tokens without an
 * audience, as before resource indicators). Internal to the package.
 *
 * @throws {OAuthError} `invalid_target`.
 */
export function grantedAudience(
  params: OAuthParams,
  resources: CompiledResources | undefined,
): readonly string[] | undefined {
  return readRequestedResources(params, resources) ?? resources?.defaultAudience
}

/**
 * The audience of a token issued from a grant at the token endpoint: the grant's audience, or the
 * subset `resource` names (RFC 8707 §2.2). A value outside what was granted is `invalid_target`: a
 * token request may narrow the audience, never widen it. A grant without audience (issued before
 * the host declared resources) may be narrowed to any known resource, and without `resource` gets
 * the default audience. Internal to the package.
 *
 * @throws {OAuthError} `invalid_target`.
 */
export function narrowAudience(
  params: OAuthParams,
  resources: CompiledResources | undefined,
  granted: readonly string[] | undefined,
): readonly string[] | undefined {
  const requested = readRequestedResources(params, resources)
  // A grant from before the host declared resources must not go on minting tokens good everywhere:
  // once resources are declared, its tokens get the default audience.
  if (requested === undefined) return granted ?? resources?.defaultAudience
  const extra = granted === undefined ? undefined : requested.find((value) => !granted.includes(value))
  if (extra !== undefined) throw invalidTarget(`resource ${extra} was not granted`)
  return requested
}
