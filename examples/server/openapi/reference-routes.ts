/**
 * `/openapi.json` and `/docs`: the description of the routes the server mounts, and an interactive
 * reference over it (Swagger UI from the `swagger-ui-dist` package, served from here: no CDN, so
 * the page works offline and loads no third-party script).
 */
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { json } from '../routes/http-result.js'
import type { Route, RouteResult, RouteSet } from '../routes/route-set.js'
import { type ApiDocument, apiDocument } from './api-document.js'

/** Where the reference is served. */
export const DOCS_PATH = '/docs'

/** Where the description is served. */
export const OPENAPI_PATH = '/openapi.json'

// Relative URLs: behind a proxy that serves the server under a path prefix they still resolve.
const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>API reference · Data access</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="docs/swagger-ui.css">
</head>
<body>
<div id="swagger-ui"></div>
<script src="docs/swagger-ui-bundle.js"></script>
<script src="docs/reference.js"></script>
</body>
</html>
`

// Every operation listed with its summary (which names the scope); the `x-data-access` extension
// shown under each operation once it is opened.
const INIT = `window.ui = SwaggerUIBundle({
  url: 'openapi.json',
  dom_id: '#swagger-ui',
  docExpansion: 'list',
  deepLinking: true,
  showExtensions: true,
  defaultModelsExpandDepth: -1,
})
`

// Swagger UI sets inline styles; every script is a file of this server.
const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ')

const ASSETS: Readonly<Record<string, { readonly file: string; readonly contentType: string }>> = {
  'swagger-ui.css': { file: 'swagger-ui.css', contentType: 'text/css; charset=utf-8' },
  'swagger-ui-bundle.js': { file: 'swagger-ui-bundle.js', contentType: 'text/javascript; charset=utf-8' },
}

// Read on first use and kept: the files change only with the package.
const assets = new Map<string, string>()

function assetOf(name: string): RouteResult {
  let body = assets.get(name)
  if (body === undefined) {
    const folder = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'))
    body = readFileSync(join(folder, ASSETS[name]!.file), 'utf8')
    assets.set(name, body)
  }
  return { kind: 'asset', status: 200, contentType: ASSETS[name]!.contentType, body }
}

/**
 * The reference routes over `described` (read when a request comes, so it sees every set the app
 * mounts) for a server whose public origin is `origin()`.
 *
 * @example
 * const reference = referenceRoutes(() => app.routeSets, () => app.origin.url)
 */
export function referenceRoutes(described: () => readonly RouteSet[], origin: () => string): RouteSet {
  // One document per origin: the origin is known once the server listens, and fixed after.
  let cached: { readonly origin: string; readonly document: ApiDocument } | undefined
  const document = (): ApiDocument => {
    const now = origin()
    if (cached?.origin !== now) cached = { origin: now, document: apiDocument(described(), now) }
    return cached.document
  }
  const routes: Route[] = [
    { method: 'GET', path: OPENAPI_PATH, handle: async () => json(document()) },
    {
      method: 'GET',
      path: DOCS_PATH,
      handle: async () => ({
        kind: 'html',
        status: 200,
        body: PAGE,
        headers: { 'content-security-policy': CONTENT_SECURITY_POLICY },
      }),
    },
    {
      method: 'GET',
      path: `${DOCS_PATH}/reference.js`,
      handle: async () => ({
        kind: 'asset',
        status: 200,
        contentType: 'text/javascript; charset=utf-8',
        body: INIT,
      }),
    },
    ...Object.keys(ASSETS).map(
      (name): Route => ({ method: 'GET', path: `${DOCS_PATH}/${name}`, handle: async () => assetOf(name) }),
    ),
  ]
  return { name: 'reference', routes }
}
