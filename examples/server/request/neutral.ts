/**
 * Building the neutral request (routes/route-set.ts) from the Node request under every framework: the
 * headers, cookies and target come from the `IncomingMessage` the same way on Express, Fastify and
 * Hono; the body from the binding's parser; the client address and protocol from the adapter, whose
 * reading the API's policy uses too.
 */
import type { IncomingMessage } from 'node:http'
import type { Principal } from 'data-access-policy'
import type { ApiRequest } from '../routes/route-set.js'
import { parseCookies } from './cookies.js'
import { queryOf } from './target.js'

/** What a binding knows that the Node request does not tell the same way everywhere. */
export interface FrameworkFacts {
  readonly params: Readonly<Record<string, string | undefined>>
  /** Read lazily: the adapter sets it once authentication ran. */
  readonly principal: () => Principal | undefined
  readonly clientAddress: string | undefined
  readonly protocol: string
  /** The raw request target, when the framework may have rewritten `url` (Express sub-routers). */
  readonly target?: string
  /** The body the binding's parser read ahead (request/body.ts). */
  readonly body: () => Promise<Buffer>
}

function firstValues(incoming: IncomingMessage): Record<string, string | undefined> {
  const headers: Record<string, string | undefined> = Object.create(null)
  for (const [name, values] of Object.entries(incoming.headersDistinct)) headers[name] = values?.[0]
  return headers
}

/**
 * The neutral request for a Node request.
 *
 * @example
 * const request = neutralRequest(req, { params: req.params, principal: () => req.principal,
 *   clientAddress: req.ip, protocol: 'http' })
 */
export function neutralRequest(incoming: IncomingMessage, facts: FrameworkFacts): ApiRequest {
  const distinct = incoming.headersDistinct
  const target = facts.target ?? incoming.url ?? '/'
  return {
    params: facts.params,
    contentType: incoming.headers['content-type'],
    query: queryOf(target),
    get principal() {
      return facts.principal()
    },
    body: facts.body,
    method: (incoming.method ?? 'GET').toUpperCase(),
    target,
    headers: firstValues(incoming),
    authorization: distinct.authorization ?? [],
    dpop: distinct.dpop ?? [],
    cookies: parseCookies(distinct.cookie ?? []),
    clientAddress: facts.clientAddress,
    protocol: facts.protocol,
  }
}
