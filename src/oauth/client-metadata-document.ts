/**
 * Client ID metadata documents (draft-ietf-oauth-client-id-metadata-document): a `client_id` that is
 * an `https` URL names a JSON document, on the client's own site, with the client's metadata. These
 * are the pure rules: which URLs may name one, what a fetched document must hold, and how long it is
 * kept. The fetch itself (DNS, sockets) is the host's.
 */
import type { OAuthClient } from './oauth-client.js'
import { isPublicAddress } from './public-address.js'
import { isRegistrableRedirectUri } from './registrable-redirect-uri.js'

/** The longest client ID URL accepted: longer ones are refused without a look. */
export const MAX_CLIENT_ID_URL_LENGTH = 2000

/** The most redirect URIs a document or a registration may list. */
export const MAX_CLIENT_REDIRECT_URIS = 20

/** The longest `client_name` accepted, in characters. */
export const MAX_CLIENT_NAME_LENGTH = 100

/** Options of {@link checkClientIdUrl}. */
export interface CheckClientIdUrlOptions {
  /**
   * Accept `http://127.0.0.1[:PORT]/…` and `http://[::1][:PORT]/…` too: for development and tests
   * only, where the client's document is served on the same machine.
   */
  readonly allowHttpLoopback?: boolean
}

/**
 * A URL that may name a client's metadata document: its host (shown on the consent page) and, for an
 * IP literal, the address (the fetcher connects to it without resolving anything).
 */
export type ClientIdUrlCheck =
  | { readonly ok: true; readonly url: URL; readonly host: string; readonly address: string | undefined }
  | { readonly ok: false; readonly reason: string }

const refuse = (reason: string): ClientIdUrlCheck => ({ ok: false, reason })

// The path segments of the URL as written, before a parser removes dot segments.
function hasDotSegment(value: string): boolean {
  const path = value.replace(/^[a-z]+:\/\/[^/?#]*/i, '').replace(/[?#].*$/s, '')
  return path.split('/').some((segment) => /^(?:\.|%2e){1,2}$/i.test(segment))
}

function ipLiteral(hostname: string): string | undefined {
  if (hostname.startsWith('[')) return hostname.slice(1, -1)
  return /^[0-9.]+$/.test(hostname) ? hostname : undefined
}

/**
 * Whether `value` may be a client ID metadata document URL: `https`, a host, the default port 443
 * (a `client_id` must not aim the server's fetch at another service of a host, such as
 * `https://victim.example:22/x`), a path other than `/`,
 * no fragment, no user name or password, no `.` or `..` segment, written as a URL parser would write
 * it (so that the string compared with the document's `client_id` is the one fetched), and no host
 * that is an IP literal outside the public Internet (see {@link isPublicAddress}). With
 * `allowHttpLoopback`, `http://127.0.0.1` and `http://[::1]` URLs pass too, and loopback URLs of
 * either scheme on any port (tests serve documents on random ports). A host name passes here;
 * every address it resolves to must then pass {@link isPublicAddress} before the fetch connects.
 *
 * @example
 * checkClientIdUrl('https://app.example.com/oauth/client.json').ok // true
 * checkClientIdUrl('https://10.0.0.1/client.json') // { ok: false, reason: 'its host is not a public address' }
 * checkClientIdUrl('https://app.example.com:8443/c.json').ok // false: not the default port
 */
export function checkClientIdUrl(value: string, options: CheckClientIdUrlOptions = {}): ClientIdUrlCheck {
  if (value.length > MAX_CLIENT_ID_URL_LENGTH) {
    return refuse(`it is longer than ${MAX_CLIENT_ID_URL_LENGTH} characters`)
  }
  if (!URL.canParse(value)) return refuse('it is not a URL')
  const url = new URL(value)
  const address = ipLiteral(url.hostname)
  const loopback = address === '127.0.0.1' || address === '::1'
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback && options.allowHttpLoopback)) {
    return refuse('it is not an https URL')
  }
  if (url.username !== '' || url.password !== '') return refuse('it holds a user name or password')
  // The parser drops an explicit :443 from an https URL, so any port left is another one.
  if (url.port !== '' && !(loopback && options.allowHttpLoopback)) {
    return refuse(`it names port ${url.port}, a port other than 443`)
  }
  if (value.includes('#')) return refuse('it has a fragment')
  if (hasDotSegment(value)) return refuse('its path has a . or .. segment')
  if (url.pathname === '/' || url.pathname === '') return refuse('it has no path')
  if (url.href !== value) return refuse(`it is not written as ${JSON.stringify(url.href)}`)
  if (address !== undefined && !(loopback && options.allowHttpLoopback) && !isPublicAddress(address)) {
    return refuse('its host is not a public address')
  }
  return { ok: true, url, host: url.host, address }
}

/** What a valid client ID metadata document says of its client. */
export interface ClientMetadata {
  /** The document's URL, which is the client's id. */
  readonly clientId: string
  readonly redirectUris: readonly string[]
  /** `client_name`, plain text, when given. */
  readonly name: string | undefined
  /** `client_uri`, when given: an `https` URL, shown as text and never fetched. */
  readonly clientUri: string | undefined
}

/** The outcome of {@link parseClientMetadataDocument}. */
export type ClientMetadataParse =
  | { readonly ok: true; readonly metadata: ClientMetadata }
  | { readonly ok: false; readonly reason: string }

const invalid = (reason: string): ClientMetadataParse => ({ ok: false, reason })

// Control characters (C0, DEL, C1), and the invisible and bidirectional formatting characters a
// name could use to pose as another on a consent page: zero-width spaces and joiners, the
// left-to-right and right-to-left marks, embeddings, overrides and isolates (U+202A–U+202E,
// U+2066–U+2069), the invisible operators (U+2060–U+2065), the line and paragraph separators and
// the byte order mark.
// biome-ignore lint/suspicious/noControlCharactersInRegex: the rule is to refuse control characters
const NOT_PLAIN = /[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/

/**
 * Whether `value` is plain text for a page: at most `max` characters, none of them a control
 * character (U+0000–U+001F, U+007F–U+009F) or an invisible or bidirectional formatting character
 * (U+200B–U+200F, U+2028–U+202E, U+2060–U+2069, U+FEFF), which could make a client's name read as
 * another's (`Evil\u202Eelgoog` shows as `Evilgoogle`).
 *
 * @example
 * isPlainText('My CLI', 100) // true
 * isPlainText('a\nb', 100) // false
 * isPlainText('Evil\u202eelgoog', 100) // false
 */
export function isPlainText(value: unknown, max: number): value is string {
  return typeof value === 'string' && value.length <= max && !NOT_PLAIN.test(value)
}

function checkRedirectUris(value: unknown): string | undefined {
  if (!Array.isArray(value) || value.length === 0) return 'redirect_uris must be a non-empty array'
  if (value.length > MAX_CLIENT_REDIRECT_URIS) {
    return `redirect_uris may list at most ${MAX_CLIENT_REDIRECT_URIS} URIs`
  }
  const bad = value.find((uri) => typeof uri !== 'string' || !isRegistrableRedirectUri(uri))
  if (bad !== undefined) {
    return `redirect_uris holds ${JSON.stringify(bad)}, which is not an https URI or a loopback http URI`
  }
  return undefined
}

// The fields a public client using only the authorization code flow may hold, each checked.
function checkGrants(document: Record<string, unknown>): string | undefined {
  if (document.token_endpoint_auth_method !== 'none') {
    return 'token_endpoint_auth_method must be "none": only public clients may use a metadata document'
  }
  if ('client_secret' in document || 'client_secret_expires_at' in document) {
    return 'a metadata document must not hold a client secret'
  }
  const grants = document.grant_types
  if (
    grants !== undefined &&
    (!Array.isArray(grants) ||
      !grants.includes('authorization_code') ||
      grants.some((grant) => grant !== 'authorization_code' && grant !== 'refresh_token'))
  ) {
    return 'grant_types must list authorization_code, and refresh_token at most besides'
  }
  const responses = document.response_types
  if (responses !== undefined && (!Array.isArray(responses) || responses.some((type) => type !== 'code'))) {
    return 'response_types may only list code'
  }
  return undefined
}

/**
 * Checks a fetched client ID metadata document (already parsed JSON) against the URL it was fetched
 * from: `client_id` equal to `clientId` exactly; `redirect_uris` a non-empty list of `https` or
 * loopback `http` URIs without fragment; `token_endpoint_auth_method` exactly `none` and no client
 * secret (a secret published at a URL is no secret); `grant_types` and `response_types`, when given,
 * within the authorization code flow; `client_name` plain text of at most
 * {@link MAX_CLIENT_NAME_LENGTH} characters; `client_uri` an `https` URL.
 *
 * @example
 * const parsed = parseClientMetadataDocument('https://app.example.com/client.json', await response.json())
 * if (!parsed.ok) console.warn(parsed.reason)
 */
export function parseClientMetadataDocument(clientId: string, document: unknown): ClientMetadataParse {
  if (typeof document !== 'object' || document === null || Array.isArray(document)) {
    return invalid('the document is not a JSON object')
  }
  const fields = document as Record<string, unknown>
  if (fields.client_id !== clientId) {
    return invalid("the document's client_id is not the URL it was fetched from")
  }
  const problem = checkRedirectUris(fields.redirect_uris) ?? checkGrants(fields)
  if (problem !== undefined) return invalid(problem)
  const name = fields.client_name
  if (name !== undefined && !isPlainText(name, MAX_CLIENT_NAME_LENGTH)) {
    return invalid(`client_name must be plain text of at most ${MAX_CLIENT_NAME_LENGTH} characters`)
  }
  const clientUri = fields.client_uri
  if (clientUri !== undefined && !isHttpsUrl(clientUri)) return invalid('client_uri must be an https URL')
  return {
    ok: true,
    metadata: {
      clientId,
      redirectUris: fields.redirect_uris as string[],
      name: name === '' ? undefined : (name as string | undefined),
      clientUri: clientUri as string | undefined,
    },
  }
}

function isHttpsUrl(value: unknown): boolean {
  return (
    typeof value === 'string' &&
    value.length <= MAX_CLIENT_ID_URL_LENGTH &&
    URL.canParse(value) &&
    new URL(value).protocol === 'https:'
  )
}

/**
 * The client a metadata document describes, as the endpoints see it: public, its document's redirect
 * URIs, and never offline access — storing a user's token for offline use needs a client the operator
 * registered, which a document anyone can publish is not.
 *
 * @example
 * const client = metadataDocumentClient(parsed.metadata) // client.offline === false
 */
export function metadataDocumentClient(metadata: ClientMetadata): OAuthClient {
  return {
    id: metadata.clientId,
    redirectUris: metadata.redirectUris,
    offline: false,
    ...(metadata.name !== undefined && { name: metadata.name }),
  }
}

/** Bounds of {@link documentCacheLifetimeMs}. */
export interface CacheLifetimeBounds {
  /** The shortest time a document is kept, also for `no-store`, `no-cache` or `max-age=0`. */
  readonly minMs: number
  /** The longest time a document is kept, whatever it asks for. */
  readonly maxMs: number
  /** The time for a document whose `Cache-Control` has no `max-age`. */
  readonly defaultMs: number
}

/** The bounds the reference server keeps documents within: 1 minute to 1 day, 1 hour by default. */
export const DEFAULT_DOCUMENT_CACHE_BOUNDS: CacheLifetimeBounds = Object.freeze({
  minMs: 60_000,
  maxMs: 24 * 60 * 60_000,
  defaultMs: 60 * 60_000,
})

/**
 * How long to keep a fetched document, from its `Cache-Control` header: `max-age` clamped within
 * the bounds; `no-store` and `no-cache` the minimum (a client cannot make the server fetch on every
 * request); no or an unreadable `max-age` the default.
 *
 * @example
 * documentCacheLifetimeMs('public, max-age=300', DEFAULT_DOCUMENT_CACHE_BOUNDS) // 300_000
 * documentCacheLifetimeMs('no-store', DEFAULT_DOCUMENT_CACHE_BOUNDS) // 60_000
 * @see https://www.rfc-editor.org/rfc/rfc9111#section-5.2.2
 */
export function documentCacheLifetimeMs(
  cacheControl: string | undefined,
  bounds: CacheLifetimeBounds,
): number {
  const directives = (cacheControl ?? '')
    .toLowerCase()
    .split(',')
    .map((part) => part.trim())
  if (directives.includes('no-store') || directives.includes('no-cache')) return bounds.minMs
  const maxAge = directives.find((part) => /^max-age="?[0-9]{1,10}"?$/.test(part))
  if (maxAge === undefined) return Math.min(Math.max(bounds.defaultMs, bounds.minMs), bounds.maxMs)
  const seconds = Number(maxAge.replace(/[^0-9]/g, ''))
  return Math.min(Math.max(seconds * 1000, bounds.minMs), bounds.maxMs)
}
