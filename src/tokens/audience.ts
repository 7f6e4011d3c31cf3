import { ConfigError } from '../errors.js'

/** Most resources one token may be bound to: enough for an API and a few tools, not a wildcard. */
export const MAX_AUDIENCE_SIZE = 16

const MAX_RESOURCE_LENGTH = 2000
// Printable ASCII without space, quotes or backslash: the value is compared byte for byte, shown on
// consent pages and may go into a quoted header value, so nothing there may need escaping.
const RESOURCE_CHARACTERS = /^[\x21\x23-\x5b\x5d-\x7e]+$/

/**
 * Whether `value` is a resource identifier as RFC 8707 §2 defines it: an absolute `http` or `https`
 * URI without a fragment (and without user info), at most 2000 printable ASCII characters. Resource
 * identifiers are compared as strings, exactly: `https://a.example/api` and `https://a.example/api/`
 * are two resources.
 *
 * @example
 * isResourceIdentifier('https://data.example.org/api/v1') // true
 * isResourceIdentifier('https://data.example.org/api/v1#x') // false
 * @see https://www.rfc-editor.org/rfc/rfc8707#section-2
 */
export function isResourceIdentifier(value: unknown): value is string {
  if (typeof value !== 'string' || value.length > MAX_RESOURCE_LENGTH) return false
  if (!RESOURCE_CHARACTERS.test(value) || value.includes('#') || !URL.canParse(value)) return false
  const url = new URL(value)
  return (url.protocol === 'https:' || url.protocol === 'http:') && url.username === '' && url.password === ''
}

/** The rule {@link isResourceIdentifier} checks, in words, for error messages. */
export const RESOURCE_IDENTIFIER_RULE =
  'must be an absolute http or https URI without fragment or user info, of at most 2000 printable ASCII characters'

/**
 * Checks and normalizes a token's audience: 1–16 resource identifiers, duplicates dropped, in the
 * order given. Internal to the package.
 *
 * @throws {ConfigError} naming `audience` (and the index of a bad entry).
 */
export function normalizeAudience(audience: unknown): readonly string[] {
  if (!Array.isArray(audience) || audience.length === 0 || audience.length > MAX_AUDIENCE_SIZE) {
    throw new ConfigError(['audience'], `must be a list of 1–${MAX_AUDIENCE_SIZE} resource identifiers`)
  }
  const seen = new Set<string>()
  audience.forEach((resource: unknown, index) => {
    if (!isResourceIdentifier(resource)) {
      throw new ConfigError(
        ['audience', index],
        `${RESOURCE_IDENTIFIER_RULE}; got ${JSON.stringify(resource)}`,
      )
    }
    seen.add(resource)
  })
  return Object.freeze([...seen])
}

/**
 * Whether a token with `audience` may be used at the resource `resource`. A token without an
 * audience is for any resource of its issuer (the API tokens of the settings pages); a token with
 * one is only for the resources it names, and never for a policy that declares none: a guard that
 * does not know which resource it protects cannot tell a token meant for another one.
 *
 * @example
 * isAudienceOf(undefined, 'https://a.example/api') // true
 * isAudienceOf(['https://a.example/mcp'], 'https://a.example/api') // false
 */
export function isAudienceOf(audience: readonly string[] | undefined, resource: string | undefined): boolean {
  if (audience === undefined) return true
  return resource !== undefined && Array.isArray(audience) && audience.includes(resource)
}
