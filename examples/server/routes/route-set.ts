/**
 * Framework-neutral routes. Every route of the server is described once, here, as data: method,
 * path with `:params`, what the library must check, and a handler that returns a neutral result.
 * The Express, Fastify and Hono bindings only translate these, so the three servers cannot
 * disagree. A binding mounts a list of route sets: the API first, then the pages (sign-in,
 * workspace settings, OAuth), which are routes without `access`.
 */
import type { IncomingHttpHeaders } from 'node:http'
import type { Deny, Operation, Principal, Resource } from 'data-access-policy'

/** What a handler may read from a request, whatever the framework. */
export interface ApiRequest {
  /** Path parameters, decoded by the framework's router. */
  readonly params: Readonly<Record<string, string | undefined>>
  /** The query string of the raw request target. */
  readonly query: URLSearchParams
  /** The `Content-Type` header, if any. */
  readonly contentType: string | undefined
  /** The authenticated caller; present on every route that has `access`. */
  readonly principal: Principal | undefined
  /**
   * The raw request body (empty when there is none), read at most once and capped at
   * {@link MAX_BODY_BYTES} (or the route's {@link Route.maxBodyBytes}); read here rather than by the framework because Fastify does not parse
   * GET bodies and `@hono/node-server` drops them, while the listing accepts a JSON body on GET.
   */
  readonly body: () => Promise<Buffer>
  /** The request method, upper-case. */
  readonly method: string
  /**
   * The raw request target (`/settings/tokens?x=1`), already checked canonical by the front door,
   * without `--public-url`'s path prefix (a route target: hand it to a browser with `web.paths.to`).
   */
  readonly target: string
  /**
   * Request headers by lower-case name, each its first value (a repeated header is not joined);
   * read `authorization` from {@link ApiRequest.authorization}, which keeps every value.
   */
  readonly headers: Readonly<Record<string, string | undefined>>
  /** Every `Authorization` header value as received, in order (RFC 6750 §2: two is an error). */
  readonly authorization: readonly string[]
  /** Every `DPoP` header value as received, in order (RFC 9449 §4.3: two is an error). */
  readonly dpop: readonly string[]
  /** Cookies by name, from every `Cookie` header; the first of a repeated name wins. */
  readonly cookies: Readonly<Record<string, string>>
  /**
   * The client's address, with `X-Forwarded-For` applied only as far as `--trust-proxy` trusts the
   * peers that set it: the same address the API's policy sees.
   */
  readonly clientAddress: string | undefined
  /** `http` or `https`, from the socket or a trusted `X-Forwarded-Proto`, as the API's policy sees it. */
  readonly protocol: string
}

/** The largest request body a handler reads, unless its route says otherwise ({@link Route.maxBodyBytes}). */
export const MAX_BODY_BYTES = 64 * 1024

/**
 * Extra response headers by lower-case name; an array is sent as one header line per value
 * (`set-cookie`).
 */
export type ResponseHeaders = Readonly<Record<string, string | readonly string[]>>

/** A handler's answer, which each binding renders the same way. */
export type RouteResult =
  /** A JSON document, serialized by the binding, with optional extra headers. */
  | {
      readonly kind: 'json'
      readonly status: number
      readonly body: unknown
      readonly headers?: ResponseHeaders
    }
  /**
   * An HTML page. The binding always sends it as `text/html; charset=utf-8` with
   * `Cache-Control: no-store` and the page headers of http/result-headers.ts, whatever `headers` says.
   */
  | {
      readonly kind: 'html'
      readonly status: number
      readonly body: string
      readonly headers?: ResponseHeaders
    }
  /**
   * A static file of the server's own (the API reference's script and style sheet), cacheable,
   * with `X-Content-Type-Options: nosniff`.
   */
  | {
      readonly kind: 'asset'
      readonly status: number
      readonly contentType: string
      readonly body: string
    }
  /** A redirect with an empty body, always `Cache-Control: no-store`. */
  | {
      readonly kind: 'redirect'
      readonly status: 302 | 303
      /** A same-origin path or an absolute URL, sent as is. */
      readonly location: string
      readonly headers?: ResponseHeaders
    }
  /** Data content (table rows): sent through the adapter, which enforces the export caps. */
  | {
      readonly kind: 'data'
      readonly status: number
      readonly contentType: string
      readonly body: string
      /** How many records (table rows) the body carries. */
      readonly records: number
    }
  /** A denial of the policy, rendered by the adapter (status, body, `WWW-Authenticate`). */
  | { readonly kind: 'denial'; readonly deny: Deny }

/** What the library checks before the handler runs. */
export interface RouteAccess {
  /** The operation to authorize; absent: authentication only (the handler filters, as a listing does). */
  readonly operation?: Operation
  /** Describes the resource for the policy, or `undefined` when it does not exist (404). */
  readonly resource?: (request: ApiRequest) => Resource | undefined | Promise<Resource | undefined>
}

/** One route. */
export interface Route {
  readonly method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE'
  /** Path with `:name` parameters, one per segment, the syntax all three routers share. */
  readonly path: string
  /** The library's checks. Every API route has them; a route without them is a public page. */
  readonly access?: RouteAccess
  readonly handle: (request: ApiRequest) => Promise<RouteResult>
  /**
   * The largest body this route reads, where {@link MAX_BODY_BYTES} is too small for what it is
   * documented to accept. Bodies are read before routing, so the cap is found by the exact path:
   * a route with its own cap has no `:params`.
   */
  readonly maxBodyBytes?: number
  /**
   * With {@link maxBodyBytes}: which requests may read past {@link MAX_BODY_BYTES}, judged on their
   * headers before the body is (request/body.ts). Absent: every request may.
   */
  readonly largeBodyGate?: (headers: IncomingHttpHeaders) => boolean
  /**
   * The 503 when a store fails, where the default does not fit: an API route answers the policy's
   * 503, a page the 503 page (../http/run-route.ts); the OAuth JSON endpoints answer in their shape.
   */
  readonly unavailable?: () => RouteResult
}

/** A named group of routes that a binding mounts together. */
export interface RouteSet {
  readonly name: string
  readonly routes: readonly Route[]
}
