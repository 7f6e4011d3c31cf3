/**
 * The one page layout of the server's HTML pages (sign-in, workspace settings, OAuth): plain,
 * server-rendered, accessible HTML with a little inline CSS and no framework. Every string that
 * reaches a page from outside goes through {@link escapeHtml}; page bodies are HTML built by the
 * callers from escaped parts.
 */
import { createHash } from 'node:crypto'
import type { ResponseHeaders, RouteResult } from '../routes/route-set.js'
import { csrfField } from './csrf.js'
import { escapeHtml } from './escape-html.js'
import type { PagePaths } from './page-paths.js'

export { escapeHtml }

const STYLE = `
:root { color-scheme: light; --ink: #1b1f24; --muted: #4b5563; --line: #c9ced6; --accent: #0b57d0;
  --danger: #b3261e; --warn-bg: #fff4e5; --warn-line: #b45309; --ok-bg: #e8f5e9; --ok-line: #2e7d32; }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink); background: #f6f7f9; }
header { background: #fff; border-bottom: 1px solid var(--line); }
header .bar { max-width: 64rem; margin: 0 auto; padding: .6rem 1rem; display: flex; gap: 1rem; align-items: center; flex-wrap: wrap; }
header .site { font-weight: 700; margin-right: auto; color: var(--ink); text-decoration: none; }
header form { margin: 0; }
main { width: min(64rem, calc(100% - 2rem)); margin: 1.5rem auto; padding: 1.5rem; background: #fff; border: 1px solid var(--line); border-radius: 8px; }
h1 { font-size: 1.6rem; margin: 0 0 1rem; }
h2 { font-size: 1.25rem; margin: 2rem 0 .75rem; }
a { color: var(--accent); }
label, legend { font-weight: 600; }
.field { margin: 0 0 1rem; }
.field label { display: block; margin-bottom: .25rem; }
.hint { color: var(--muted); font-size: .9rem; margin: .2rem 0 0; }
input[type=text], input[type=password], input[type=date], input:not([type]) { font: inherit; padding: .45rem .6rem; border: 1px solid #8a93a0; border-radius: 4px; width: 100%; max-width: 28rem; }
input[aria-invalid=true] { border-color: var(--danger); outline: 1px solid var(--danger); }
:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
fieldset { border: 1px solid var(--line); border-radius: 6px; margin: 0 0 1rem; padding: .75rem 1rem; }
.choice { display: grid; grid-template-columns: auto 1fr; gap: .1rem .6rem; margin: .5rem 0; }
.choice input { margin-top: .3rem; }
.choice label { font-weight: 400; }
.choice .hint { grid-column: 2; margin: 0; }
button { font: inherit; font-weight: 600; padding: .45rem 1rem; border-radius: 4px; border: 1px solid var(--accent); background: var(--accent); color: #fff; cursor: pointer; }
button.secondary { background: #fff; color: var(--accent); }
button.danger { background: var(--danger); border-color: var(--danger); }
button.link { background: none; border: none; color: var(--accent); padding: 0; text-decoration: underline; font-weight: 400; }
table { border-collapse: collapse; width: 100%; margin: .5rem 0 1rem; font-size: .95rem; }
caption { text-align: left; color: var(--muted); padding-bottom: .4rem; }
th, td { text-align: left; vertical-align: top; padding: .5rem .6rem; border-bottom: 1px solid var(--line); }
thead th { background: #eef1f5; }
.nowrap { white-space: nowrap; }
td .actions { display: flex; gap: .5rem; align-items: center; flex-wrap: wrap; }
td form { margin: 0; }
code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .92em; }
.notice, .error, .warning { border-left: 5px solid; padding: .75rem 1rem; margin: 0 0 1.25rem; border-radius: 4px; }
.notice { background: var(--ok-bg); border-color: var(--ok-line); }
.error { background: #fdecea; border-color: var(--danger); }
.warning { background: var(--warn-bg); border-color: var(--warn-line); }
.error-text { color: var(--danger); font-weight: 600; margin: .2rem 0; }
.secret { display: flex; gap: .5rem; flex-wrap: wrap; align-items: center; }
.secret input { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; max-width: 34rem; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); white-space: nowrap; }
.row { display: flex; gap: 1rem; align-items: center; flex-wrap: wrap; }
td, th, p, li, .hint { overflow-wrap: anywhere; }
@media (max-width: 48rem) {
  main { width: 100%; margin: 0; padding: 1rem; border: none; border-radius: 0; }
  header .bar { padding: .5rem 1rem; }
  table.stack, table.stack tbody, table.stack tr, table.stack th, table.stack td { display: block; width: 100%; }
  table.stack caption { display: block; }
  table.stack thead { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); }
  table.stack tr { border: 1px solid var(--line); border-radius: 6px; margin: 0 0 .75rem; padding: .25rem 0; }
  table.stack th, table.stack td { border: none; padding: .3rem .75rem; }
  table.stack td[data-label]::before { content: attr(data-label); display: block; font-size: .8rem; font-weight: 600; color: var(--muted); }
  table.stack th[scope=row] { font-size: 1.05rem; }
  td .actions { gap: .75rem 1rem; }
}
`

/** Who is signed in, for the page header. */
export interface SignedInHeader {
  readonly handle: string
  readonly csrfToken: string
}

/** What {@link renderPage} needs. */
export interface PageOptions {
  /** The pages' addresses (page-paths.ts), for the header's links and sign-out form. */
  readonly paths: PagePaths
  /** The page title, also its `<h1>` unless `heading` says otherwise. Plain text. */
  readonly title: string
  /** The `<h1>` text when it differs from the title. Plain text. */
  readonly heading?: string
  /** The page content after the `<h1>`: HTML built by the caller from escaped parts. */
  readonly body: string
  /** Default 200. */
  readonly status?: number
  /** The signed-in user, for the header with its sign-out form; absent on signed-out pages. */
  readonly session?: SignedInHeader | undefined
  /** Extra response headers (`set-cookie`, `retry-after`). */
  readonly headers?: ResponseHeaders
  /** Inline scripts (JavaScript source, no `<script>` tag); the CSP admits exactly these. */
  readonly scripts?: readonly string[]
}

function sha256Source(source: string): string {
  return `'sha256-${createHash('sha256').update(source).digest('base64')}'`
}

const STYLE_HASH = sha256Source(STYLE)

// Nothing loads from elsewhere, nothing frames the page; form targets are left open because the
// OAuth consent form's answer redirects to the client's redirect URI, which Chromium checks
// against `form-action` too.
function contentSecurityPolicy(scripts: readonly string[]): string {
  const scriptSrc = scripts.length === 0 ? "'none'" : scripts.map(sha256Source).join(' ')
  return [
    "default-src 'none'",
    `style-src ${STYLE_HASH}`,
    `script-src ${scriptSrc}`,
    "img-src 'self'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
  ].join('; ')
}

/** An address of {@link PagePaths.to}, escaped for an attribute. */
export function pageHref(paths: PagePaths, route: string): string {
  return escapeHtml(paths.to(route))
}

function headerOf(paths: PagePaths, session: SignedInHeader | undefined): string {
  const tokens = pageHref(paths, '/settings/tokens')
  const account =
    session === undefined
      ? `<a href="${pageHref(paths, '/signin')}">Sign in</a>`
      : `<span>Signed in as <strong>${escapeHtml(session.handle)}</strong></span>
      <a href="${tokens}">API tokens</a>
      <form method="post" action="${pageHref(paths, '/signout')}">${csrfField(session)}<button type="submit" class="secondary">Sign out</button></form>`
  return `<header><div class="bar"><a class="site" href="${tokens}">Data access</a>
      ${account}</div></header>`
}

/**
 * Renders a page in the common layout as an `html` result; the binding adds `Content-Type` and
 * `Cache-Control: no-store`.
 *
 * @example
 * renderPage({ paths: web.paths, title: 'Not found', status: 404, body: '<p>No such token.</p>', session })
 */
export function renderPage(options: PageOptions): RouteResult {
  const scripts = options.scripts ?? []
  const heading = options.heading ?? options.title
  const body = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin">
<title>${escapeHtml(options.title)} · Data access</title>
<style>${STYLE}</style>
</head>
<body>
${headerOf(options.paths, options.session)}
<main id="main">
<h1>${escapeHtml(heading)}</h1>
${options.body}
</main>
${scripts.map((source) => `<script>${source}</script>`).join('\n')}
</body>
</html>
`
  return {
    kind: 'html',
    status: options.status ?? 200,
    body,
    headers: { ...options.headers, 'content-security-policy': contentSecurityPolicy(scripts) },
  }
}

/**
 * A short page saying what went wrong, with a way on: 403 for a failed CSRF check, 404, 429.
 *
 * @example
 * messagePage(web.paths, 404, 'Not found', 'There is no such token.', session)
 */
export function messagePage(
  paths: PagePaths,
  status: number,
  title: string,
  message: string,
  session?: SignedInHeader,
  headers?: ResponseHeaders,
): RouteResult {
  const back =
    session === undefined
      ? `<a href="${pageHref(paths, '/signin')}">Go to sign-in</a>`
      : `<a href="${pageHref(paths, '/settings/tokens')}">Back to API tokens</a>`
  return renderPage({
    paths,
    title,
    status,
    session,
    ...(headers === undefined ? {} : { headers }),
    body: `<p>${escapeHtml(message)}</p>\n<p>${back}</p>`,
  })
}
