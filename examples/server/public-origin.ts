/**
 * The server's externally visible origin (README.md, "Flags"): `--public-url` when given, else the address
 * it listens on. OAuth metadata's `issuer`, `verification_uri` and anything else the server hands
 * out as an absolute URL derive from it — never from a request's `Host` header, which any client
 * sets as it likes.
 */
import { ConfigError } from 'data-access-policy'
import { quote } from './seed/messages.js'
import { PagePaths } from './web/page-paths.js'

/**
 * Parses `--public-url`: an `http` or `https` URL of an origin, an optional path prefix allowed
 * (`https://data.example.org/api-gateway`); no credentials, query or fragment. Answers it without
 * a trailing slash.
 *
 * @throws {ConfigError} naming `--public-url` and quoting the value.
 * @example
 * parsePublicUrl('https://data.example.org/') // 'https://data.example.org'
 */
export function parsePublicUrl(value: string): string {
  const bad = (why: string) => new ConfigError(['--public-url'], `${quote(value)} ${why}`)
  if (!URL.canParse(value)) throw bad('is not a URL')
  const url = new URL(value)
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw bad('is not an http:// or https:// URL')
  if (url.username !== '' || url.password !== '') throw bad('must not hold a user name or password')
  if (url.search !== '' || value.includes('?')) throw bad('must not have a query')
  if (url.hash !== '' || value.includes('#')) throw bad('must not have a fragment')
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`
}

/**
 * Where the server is, once known: set from `--public-url` at once, or from the listening address
 * once the server listens (a port of 0 is known only then).
 *
 * @example
 * const origin = new PublicOrigin(undefined)
 * origin.listening('http://127.0.0.1:3000')
 * origin.url // 'http://127.0.0.1:3000'
 */
export class PublicOrigin {
  readonly #configured: string | undefined
  #listening: string | undefined
  /**
   * The addresses the pages hand to browsers, under the path prefix (web/page-paths.ts); the front
   * door routes requests under the prefix with it too (http/front-door.ts).
   */
  readonly pages: PagePaths

  constructor(publicUrl: string | undefined) {
    this.#configured = publicUrl
    this.pages = new PagePaths(this.pathPrefix)
  }

  /** Records the address the server listens on. */
  listening(url: string): void {
    this.#listening = url
  }

  /**
   * The path prefix of `--public-url` (`/dap` for `https://data.example.org/dap`), `''` without
   * one: known before the server listens, so that routes can be built with it.
   */
  get pathPrefix(): string {
    return this.#configured === undefined ? '' : new URL(this.#configured).pathname.replace(/\/+$/, '')
  }

  /**
   * A well-known URL of a resource under the origin (RFC 8615, with RFC 8414 §3.1's path insertion):
   * `/.well-known/NAME` at the host's root, then the origin's path and `suffix`.
   *
   * @example
   * new PublicOrigin('https://data.example.org/dap').wellKnown('oauth-authorization-server')
   * // 'https://data.example.org/.well-known/oauth-authorization-server/dap'
   */
  wellKnown(name: string, suffix = ''): string {
    const url = new URL(this.url)
    return `${url.origin}/.well-known/${name}${url.pathname.replace(/\/+$/, '')}${suffix}`
  }

  /** The origin: `--public-url`, else the listening address. */
  get url(): string {
    const url = this.#configured ?? this.#listening
    // Requests are served only once the server listens, so this is a wiring mistake.
    if (url === undefined) throw new Error('the server has no address before it listens')
    return url
  }
}
