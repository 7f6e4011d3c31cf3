/**
 * A small client for the data-access API that reads SERVICE_API_TOKEN.
 *
 * @packageDocumentation
 * @module data-access-policy/client
 */

import { isLoopbackAddress } from './authentication/transport.js'
import { DataAccessPolicyError } from './errors.js'

/** Options of {@link createClient}. */
export interface ClientOptions {
  /** The service origin, e.g. `https://data.example.org` (`/api/v1` is added unless present). */
  readonly baseUrl: string
  /** The bearer token; defaults to the `SERVICE_API_TOKEN` environment variable. */
  readonly token?: string
  /** The fetch implementation; defaults to the global one. */
  readonly fetch?: typeof fetch
}

/** A dataset as listed by the service. */
export interface DatasetSummary {
  readonly owner: string
  readonly name: string
  readonly description?: string
  readonly publicLevel?: string
}

/** Whose datasets to list. */
export type DatasetOwner = { readonly organization: string } | { readonly user: string }

/** Options of {@link DataAccessClient.listDatasets}. */
export interface ListDatasetsOptions {
  /** Page size asked of the service, 1–1000. Default 100. */
  readonly maxResults?: number
}

/** A small client for the data-access API. */
export interface DataAccessClient {
  /** Every dataset of an organization or user that the token may see, following `nextPageToken`. */
  listDatasets(owner: DatasetOwner, options?: ListDatasetsOptions): AsyncIterable<DatasetSummary>
  /** Sends an authenticated request to a path under `/api/v1` and returns the parsed JSON. */
  request(path: string, init?: { method?: string; body?: unknown }): Promise<unknown>
}

/**
 * The service answered with an error status; `status` and `reason` (the body's `code`) say which.
 *
 * @example
 * try {
 *   await client.request('datasets/acme/claims')
 * } catch (error) {
 *   if (error instanceof ApiError) console.error(error.status, error.reason)
 * }
 */
export class ApiError extends DataAccessPolicyError {
  /** The HTTP status. */
  readonly status: number
  /** The service's stable reason code, when its body had one. */
  readonly reason: string | undefined

  constructor(status: number, reason: string | undefined, message: string) {
    super('ERR_CLIENT', message)
    this.status = status
    this.reason = reason
  }
}

/**
 * 401: the token is missing, malformed, unknown, expired or revoked.
 *
 * @example
 * await client.request('datasets/acme/claims').catch((e) => e instanceof UnauthorizedError) // a revoked token
 */
export class UnauthorizedError extends ApiError {}
/**
 * 403: the token's scopes, the user's access or an export restriction forbid the request.
 *
 * @example
 * await client.request('datasets/acme/claims/metadata').catch((e) => e.reason) // 'insufficient_scope'
 */
export class ForbiddenError extends ApiError {}
/**
 * 404: no such resource, or one the token may not know of.
 *
 * @example
 * await client.request('datasets/acme/hidden').catch((e) => e instanceof NotFoundError) // true
 */
export class NotFoundError extends ApiError {}

function environmentToken(): string | undefined {
  const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env
  return env?.SERVICE_API_TOKEN
}

function apiBase(baseUrl: string): URL {
  let url: URL
  try {
    url = new URL(baseUrl)
  } catch {
    throw new DataAccessPolicyError(
      'ERR_INVALID_ARGUMENT',
      `options.baseUrl: ${JSON.stringify(baseUrl)} is not an absolute URL`,
    )
  }
  const host = url.hostname.replace(/^\[|\]$/g, '')
  const loopback = host === 'localhost' || isLoopbackAddress(host)
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback)) {
    throw new DataAccessPolicyError(
      'ERR_INVALID_ARGUMENT',
      `options.baseUrl: must use https (plain http only for loopback), got ${JSON.stringify(url.origin)}`,
    )
  }
  const path = url.pathname.replace(/\/+$/, '')
  url.pathname = path.endsWith('/api/v1') ? `${path}/` : `${path}/api/v1/`
  url.search = ''
  url.hash = ''
  return url
}

async function errorFor(response: Response): Promise<ApiError> {
  let reason: string | undefined
  let message = `${response.status} ${response.statusText}`.trim()
  try {
    const body = (await response.json()) as { error?: { code?: unknown; message?: unknown } }
    if (typeof body.error?.code === 'string') reason = body.error.code
    if (typeof body.error?.message === 'string') message = `${response.status} ${body.error.message}`
  } catch {
    // A body that is not the service's JSON error still leaves the status to report.
  }
  if (response.status === 401) return new UnauthorizedError(response.status, reason, message)
  if (response.status === 403) return new ForbiddenError(response.status, reason, message)
  if (response.status === 404) return new NotFoundError(response.status, reason, message)
  return new ApiError(response.status, reason, message)
}

/**
 * Creates a client that sends `Authorization: Bearer <token>` on every request. The token comes
 * from `options.token` or the `SERVICE_API_TOKEN` environment variable; neither is ever logged.
 *
 * @throws {DataAccessPolicyError} `ERR_INVALID_ARGUMENT` for a missing token or a non-HTTPS URL.
 * @example
 * const client = createClient({ baseUrl: 'https://data.example.org' })
 * for await (const dataset of client.listDatasets({ organization: 'acme' })) console.log(dataset.name)
 */
export function createClient(options: ClientOptions): DataAccessClient {
  const base = apiBase(options.baseUrl)
  const token = options.token ?? environmentToken()
  if (token === undefined || token === '') {
    throw new DataAccessPolicyError(
      'ERR_INVALID_ARGUMENT',
      'no API token: pass options.token or set the SERVICE_API_TOKEN environment variable',
    )
  }
  const send = options.fetch ?? globalThis.fetch

  async function request(path: string, init: { method?: string; body?: unknown } = {}): Promise<unknown> {
    const url = new URL(path.replace(/^\/+/, ''), base)
    // The bearer token goes to the configured service only: never to an absolute URL given as a
    // path, nor outside /api/v1 through `..` segments.
    if (url.origin !== base.origin || !url.pathname.startsWith(base.pathname)) {
      throw new DataAccessPolicyError(
        'ERR_INVALID_ARGUMENT',
        `path: ${JSON.stringify(path)} is not a path under ${base.pathname} of the configured service`,
      )
    }
    const headers: Record<string, string> = { authorization: `Bearer ${token}`, accept: 'application/json' }
    if (init.body !== undefined) headers['content-type'] = 'application/json'
    const response = await send(url, {
      method: init.method ?? 'GET',
      headers,
      ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
    })
    if (!response.ok) throw await errorFor(response)
    return response.json()
  }

  async function* listDatasets(
    owner: DatasetOwner,
    list: ListDatasetsOptions = {},
  ): AsyncIterable<DatasetSummary> {
    const path =
      'organization' in owner
        ? `organizations/${encodeURIComponent(owner.organization)}/datasets`
        : `users/${encodeURIComponent(owner.user)}/datasets`
    let pageToken: string | undefined
    do {
      const query = new URLSearchParams({ maxResults: String(list.maxResults ?? 100) })
      if (pageToken !== undefined) query.set('pageToken', pageToken)
      const page = (await request(`${path}?${query}`)) as {
        results?: DatasetSummary[]
        nextPageToken?: string | null
      }
      yield* page.results ?? []
      pageToken =
        typeof page.nextPageToken === 'string' && page.nextPageToken !== '' ? page.nextPageToken : undefined
    } while (pageToken !== undefined)
  }

  return { listDatasets, request }
}
