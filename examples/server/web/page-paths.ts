/**
 * The addresses the pages hand to a browser — form actions, links, redirects, `next` and cookie
 * paths — built from the path of `--public-url` (`/dap` for `https://data.example.org/dap`), so
 * that a proxy that serves the server under a path prefix gets back every request a page leads to.
 * They are path-absolute (`/dap/signin`): the browser keeps the scheme and host it used.
 */

/**
 * One server's page addresses: route paths (`/signin`, the paths routes are declared with) made
 * into the paths a browser sees, and back.
 *
 * @example
 * const paths = new PagePaths('/dap')
 * paths.to('/signin', { next: '/dap/settings/tokens' }) // '/dap/signin?next=/dap/settings/tokens'
 * paths.route('/dap/oauth/consent')                       // '/oauth/consent'
 * paths.cookiePath                                        // '/dap'
 */
export class PagePaths {
  /** The path prefix: `''`, or `/` followed by segments and no trailing slash (`/dap`). */
  readonly prefix: string

  /** `prefix`: the path of the public URL, as {@link PublicOrigin.pathPrefix} gives it. */
  constructor(prefix = '') {
    if (prefix !== '' && !/^(?:\/[^/?#]+)+$/.test(prefix)) {
      throw new TypeError(
        `a page path prefix must be '' or /segments without a trailing slash, got ${JSON.stringify(prefix)}`,
      )
    }
    this.prefix = prefix
  }

  /**
   * The path a browser is given for `route` (a route path, with an optional query), and `query`'s
   * parameters appended, escaped except for their slashes, which stay readable.
   *
   * @example
   * new PagePaths('/dap').to('/settings/tokens') // '/dap/settings/tokens'
   * new PagePaths().to('/signin', { next: '/oauth/authorize?a=1' }) // '/signin?next=/oauth/authorize%3Fa%3D1'
   */
  to(route: string, query?: Readonly<Record<string, string>>): string {
    if (!route.startsWith('/'))
      throw new TypeError(`a route path starts with '/', got ${JSON.stringify(route)}`)
    const pairs = Object.entries(query ?? {}).map(
      ([name, value]) => `${escapeComponent(name)}=${escapeComponent(value)}`,
    )
    const search = pairs.length === 0 ? '' : `${route.includes('?') ? '&' : '?'}${pairs.join('&')}`
    return `${this.prefix}${route}${search}`
  }

  /**
   * The route target of a path a browser sent (`/dap/x?y` → `/x?y`), or undefined when it is not
   * under the prefix. Without a prefix every path is its own route target.
   *
   * @example
   * new PagePaths('/dap').route('/dap')       // '/'
   * new PagePaths('/dap').route('/dapper/x')  // undefined
   * new PagePaths('/dap').route('/signin')    // undefined
   */
  route(target: string): string | undefined {
    if (this.prefix === '') return target
    if (!target.startsWith(this.prefix)) return undefined
    const rest = target.slice(this.prefix.length)
    if (rest === '' || rest.startsWith('?')) return `/${rest}`
    return rest.startsWith('/') ? rest : undefined
  }

  /** The `Path` of the pages' cookies: the prefix, or `/` without one (RFC 6265 §5.1.4). */
  get cookiePath(): string {
    return this.prefix === '' ? '/' : this.prefix
  }
}

function escapeComponent(text: string): string {
  return encodeURIComponent(text).replaceAll('%2F', '/')
}
