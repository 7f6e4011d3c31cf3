/**
 * A browser without a browser, for the OAuth tests: it keeps cookies, reads the forms of a page
 * (action, hidden fields, buttons) and posts them as a browser would, following same-origin
 * redirects. Tests drive the pages only through what the pages' forms say.
 */

/** One form control of a page. */
export interface FormControl {
  readonly tag: 'input' | 'button'
  readonly name: string | undefined
  readonly type: string
  readonly value: string
  readonly text: string
  readonly id: string | undefined
}

/** A form of a page, as parsed. */
export interface PageForm {
  readonly action: string
  readonly method: string
  readonly controls: readonly FormControl[]
  /** The `<label for>` texts of the form, by the control id they label. */
  readonly labels: Readonly<Record<string, string>>
}

/** An answer as the tests see it. */
export interface PageResponse {
  readonly status: number
  readonly url: string
  readonly headers: Headers
  readonly body: string
  /** Where a redirect that was not followed points (off-origin, or `follow: false`). */
  readonly location: string | undefined
}

const ENTITIES: Readonly<Record<string, string>> = { amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" }

/** Undoes the escaping of the pages (`&amp;` `&lt;` `&gt;` `&quot;` `&#39;`). */
export function unescapeHtml(text: string): string {
  return text.replace(/&(amp|lt|gt|quot|#39);/g, (_match, name: string) => ENTITIES[name]!)
}

function attributes(tag: string): Record<string, string> {
  const found: Record<string, string> = {}
  for (const match of tag.matchAll(/([a-zA-Z_:-]+)(?:="([^"]*)")?/g)) {
    found[match[1]!.toLowerCase()] = unescapeHtml(match[2] ?? '')
  }
  return found
}

/**
 * The forms of a page, in document order.
 *
 * @example
 * const [form] = parseForms(html)
 * form.action // '/signin'
 */
export function parseForms(html: string): PageForm[] {
  const forms: PageForm[] = []
  for (const match of html.matchAll(/<form\b([^>]*)>([\s\S]*?)<\/form>/g)) {
    const formAttributes = attributes(match[1]!)
    const inner = match[2]!
    const controls: FormControl[] = []
    for (const control of inner.matchAll(/<(input)\b([^>]*)>|<(button)\b([^>]*)>([\s\S]*?)<\/button>/g)) {
      const tag = (control[1] ?? control[3]) as 'input' | 'button'
      const found = attributes(control[2] ?? control[4]!)
      controls.push({
        tag,
        name: found.name,
        type: found.type ?? (tag === 'button' ? 'submit' : 'text'),
        value: found.value ?? '',
        text: unescapeHtml((control[5] ?? '').replace(/<[^>]*>/g, '').trim()),
        id: found.id,
      })
    }
    const labels: Record<string, string> = {}
    for (const label of inner.matchAll(/<label\b([^>]*)>([\s\S]*?)<\/label>/g)) {
      const target = attributes(label[1]!).for
      if (target !== undefined) labels[target] = unescapeHtml(label[2]!.replace(/<[^>]*>/g, '').trim())
    }
    forms.push({
      action: formAttributes.action ?? '',
      method: (formAttributes.method ?? 'get').toLowerCase(),
      controls,
      labels,
    })
  }
  return forms
}

/** The form of a page that has a control named `name`. */
export function formWith(html: string, name: string): PageForm {
  const form = parseForms(html).find((candidate) =>
    candidate.controls.some((control) => control.name === name),
  )
  if (form === undefined) throw new Error(`no form with a field "${name}" on the page:\n${html}`)
  return form
}

/**
 * A cookie-keeping client of one server origin.
 *
 * @example
 * const agent = new PageAgent(server.url)
 * const page = await agent.get('/oauth/authorize?…')
 */
export class PageAgent {
  readonly origin: string
  readonly #cookies = new Map<string, string>()

  constructor(origin: string) {
    this.origin = new URL(origin).origin
  }

  /** The cookies the agent holds. */
  get cookies(): ReadonlyMap<string, string> {
    return this.#cookies
  }

  /** GET a path or URL, following same-origin redirects. */
  get(target: string, options: { readonly follow?: boolean } = {}): Promise<PageResponse> {
    return this.#send('GET', new URL(target, this.origin), undefined, options.follow ?? true)
  }

  /**
   * Submits a form as a browser would: the values its inputs hold (hidden, text, …; `fields` fills
   * in or replaces them), plus the name and value of the submit button whose value is `button`.
   */
  submit(
    form: PageForm,
    fields: Readonly<Record<string, string>> = {},
    options: { readonly button?: string; readonly follow?: boolean; readonly base?: string } = {},
  ): Promise<PageResponse> {
    const body = new URLSearchParams()
    for (const control of form.controls) {
      const unchecked = control.type === 'checkbox' || control.type === 'radio'
      if (control.tag !== 'input' || control.name === undefined || unchecked) continue
      if (!Object.hasOwn(fields, control.name)) body.append(control.name, control.value)
    }
    for (const [name, value] of Object.entries(fields)) body.append(name, value)
    if (options.button !== undefined) {
      const button = form.controls.find(
        (control) => control.tag === 'button' && control.value === options.button,
      )
      if (button?.name === undefined) throw new Error(`no button valued "${options.button}" in the form`)
      body.append(button.name, button.value)
    }
    const url = new URL(form.action, options.base ?? this.origin)
    return this.#send(form.method.toUpperCase(), url, body, options.follow ?? true)
  }

  /** POST a form body of the test's own making (a forged or edited form). */
  post(
    target: string,
    fields: URLSearchParams,
    options: { readonly follow?: boolean } = {},
  ): Promise<PageResponse> {
    return this.#send('POST', new URL(target, this.origin), fields, options.follow ?? true)
  }

  async #send(
    method: string,
    url: URL,
    body: URLSearchParams | undefined,
    follow: boolean,
  ): Promise<PageResponse> {
    let current = url
    let currentMethod = method
    let currentBody = body
    for (let hop = 0; hop < 10; hop++) {
      const headers: Record<string, string> = {}
      if (this.#cookies.size > 0) {
        headers.cookie = [...this.#cookies].map(([name, value]) => `${name}=${value}`).join('; ')
      }
      if (currentBody !== undefined) headers['content-type'] = 'application/x-www-form-urlencoded'
      const response = await fetch(current, {
        method: currentMethod,
        headers,
        ...(currentBody === undefined ? {} : { body: currentBody.toString() }),
        redirect: 'manual',
      })
      this.#remember(response.headers.getSetCookie())
      const text = await response.text()
      const location = response.headers.get('location') ?? undefined
      const redirected = response.status >= 300 && response.status < 400 && location !== undefined
      if (!redirected || !follow || new URL(location, current).origin !== this.origin) {
        return {
          status: response.status,
          url: current.toString(),
          headers: response.headers,
          body: text,
          location: location === undefined ? undefined : new URL(location, current).toString(),
        }
      }
      current = new URL(location, current)
      currentMethod = 'GET'
      currentBody = undefined
    }
    throw new Error(`too many redirects from ${url}`)
  }

  #remember(setCookies: readonly string[]): void {
    for (const line of setCookies) {
      const [pair] = line.split(';')
      const equals = pair!.indexOf('=')
      const name = pair!.slice(0, equals).trim()
      const value = pair!.slice(equals + 1).trim()
      if (/max-age=0\b/i.test(line) || value === '') this.#cookies.delete(name)
      else this.#cookies.set(name, value)
    }
  }
}

/**
 * Signs in through whatever sign-in form `page` shows (fields `handle`, `password`), following
 * the answer back to where the form's `next` leads.
 */
export function signInThrough(
  agent: PageAgent,
  page: PageResponse,
  handle: string,
  password: string,
): Promise<PageResponse> {
  return agent.submit(formWith(page.body, 'password'), { handle, password })
}
