/**
 * A small browser stand-in for the page tests: a cookie jar per client, form posts, manual
 * redirects, and helpers to read a page's forms. Real HTTP over 127.0.0.1.
 */
import { request as httpRequest } from 'node:http'

/** One answer, whole. */
export interface WebResponse {
  readonly status: number
  readonly headers: Readonly<Record<string, string | string[] | undefined>>
  /** Every `Set-Cookie` line. */
  readonly setCookies: readonly string[]
  readonly body: string
}

/** Extra request options. */
export interface SendOptions {
  readonly headers?: Readonly<Record<string, string>>
  /** Leave the jar out of this request. */
  readonly noCookies?: boolean
}

/** A client with its own cookie jar, as one browser profile. */
export class WebClient {
  readonly port: number
  readonly jar = new Map<string, string>()

  constructor(port: number) {
    this.port = port
  }

  get(path: string, options: SendOptions = {}): Promise<WebResponse> {
    return this.send('GET', path, undefined, options)
  }

  /** Posts a form; an array value is sent once per entry (checkboxes). */
  post(
    path: string,
    fields: Readonly<Record<string, string | readonly string[]>> | URLSearchParams,
    options: SendOptions = {},
  ): Promise<WebResponse> {
    const form = fields instanceof URLSearchParams ? fields : new URLSearchParams()
    if (!(fields instanceof URLSearchParams)) {
      for (const [name, value] of Object.entries(fields)) {
        for (const each of typeof value === 'string' ? [value] : value) form.append(name, each)
      }
    }
    return this.send('POST', path, form.toString(), {
      ...options,
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...options.headers },
    })
  }

  /** The `Cookie` header the jar sends. */
  cookieHeader(): string {
    return [...this.jar].map(([name, value]) => `${name}=${value}`).join('; ')
  }

  send(
    method: string,
    path: string,
    body: string | undefined,
    options: SendOptions = {},
  ): Promise<WebResponse> {
    const headers: Record<string, string> = { connection: 'close', ...options.headers }
    if (!options.noCookies && this.jar.size > 0 && headers.cookie === undefined)
      headers.cookie = this.cookieHeader()
    if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body))
    return new Promise((resolve, reject) => {
      const outgoing = httpRequest(
        { host: '127.0.0.1', port: this.port, method, path, headers, agent: false },
        (incoming) => {
          const chunks: Buffer[] = []
          incoming.on('data', (chunk: Buffer) => chunks.push(chunk))
          incoming.on('error', reject)
          incoming.on('end', () => {
            const setCookies = incoming.headers['set-cookie'] ?? []
            if (!options.noCookies) this.#store(setCookies)
            resolve({
              status: incoming.statusCode ?? 0,
              headers: incoming.headers,
              setCookies,
              body: Buffer.concat(chunks).toString('utf8'),
            })
          })
        },
      )
      outgoing.on('error', reject)
      outgoing.end(body)
    })
  }

  #store(lines: readonly string[]): void {
    for (const line of lines) {
      const [pair, ...attributes] = line.split(';')
      const equals = pair!.indexOf('=')
      const name = pair!.slice(0, equals).trim()
      const value = pair!.slice(equals + 1).trim()
      const deleted = value === '' || attributes.some((attribute) => /^\s*max-age=0\s*$/i.test(attribute))
      if (deleted) this.jar.delete(name)
      else this.jar.set(name, value)
    }
  }
}

/** The `csrf_token` of the first form on a page (or of the form posting to `action`). */
export function csrfOf(page: string, action?: string): string {
  const scope = action === undefined ? page : formOf(page, action)
  const match = /name="csrf_token" value="([^"]+)"/.exec(scope)
  if (match === null)
    throw new Error(`no csrf_token${action === undefined ? '' : ` in the form to ${action}`}`)
  return match[1]!
}

/** The markup of the first form that posts to `action`. */
export function formOf(page: string, action: string): string {
  const start = page.indexOf(`action="${action}"`)
  if (start === -1) throw new Error(`no form posting to ${action}`)
  const end = page.indexOf('</form>', start)
  return page.slice(page.lastIndexOf('<form', start), end + '</form>'.length)
}

/** The value of the one-time token field of the answer page, if the page has one. */
export function tokenValueOf(page: string): string | undefined {
  return /id="token-value" readonly value="([^"]+)"/.exec(page)?.[1]
}

/** A cookie line's attributes, lower-cased names: `{ httponly: true, samesite: 'Lax', … }`. */
export function cookieAttributes(line: string): Record<string, string | true> {
  const [, ...attributes] = line.split(';')
  const out: Record<string, string | true> = {}
  for (const attribute of attributes) {
    const [name, value] = attribute.trim().split('=')
    out[name!.toLowerCase()] = value ?? true
  }
  return out
}

/** Signs a client in through the form; returns the answer to the form post. */
export async function signIn(client: WebClient, handle: string, password: string, next?: string) {
  const form = await client.get(next === undefined ? '/signin' : `/signin?next=${encodeURIComponent(next)}`)
  return client.post('/signin', {
    handle,
    password,
    csrf_token: csrfOf(form.body),
    ...(next === undefined ? {} : { next }),
  })
}
