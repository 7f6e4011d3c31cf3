/**
 * Framework-neutral routes. Every route of the server is described once, here, as data: method,
 * path with `:params`, what the library must check, and a handler that returns a neutral result.
 * The Express, Fastify and Hono bindings only translate these, so the three servers cannot
 * disagree. A binding mounts a list of route sets; the API is one set, and later sets (sign-in and
 * settings pages, OAuth) are added beside it.
 */
import type { Deny, Operation, Principal, Resource } from '../../src/index.js'

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
   * {@link MAX_BODY_BYTES}; read here rather than by the framework because Fastify does not parse
   * GET bodies and `@hono/node-server` drops them, while the listing accepts a JSON body on GET.
   */
  readonly body: () => Promise<Buffer>
}

/** The largest request body a handler reads. */
export const MAX_BODY_BYTES = 64 * 1024

/** A handler's answer, which each binding renders the same way. */
export type RouteResult =
  /** A JSON document, serialized by the binding. */
  | { readonly kind: 'json'; readonly status: number; readonly body: unknown }
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
  /** The library's checks. Every API route has them; only future public pages may go without. */
  readonly access?: RouteAccess
  readonly handle: (request: ApiRequest) => Promise<RouteResult>
}

/** A named group of routes that a binding mounts together. */
export interface RouteSet {
  readonly name: string
  readonly routes: readonly Route[]
}
