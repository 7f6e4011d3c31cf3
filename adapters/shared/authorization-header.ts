import type { IncomingHttpHeaders } from 'node:http'

/** The slice of a Node `IncomingMessage` that carries its headers. */
export interface NodeHeaderSource {
  readonly headers: IncomingHttpHeaders
  readonly rawHeaders: readonly string[]
}

const NONE: readonly string[] = Object.freeze([])

/**
 * Every `Authorization` header value of a Node request, in order. Node keeps only the first one in
 * `headers`, which would hide a second, conflicting header from the policy (RFC 6750 §2: 400).
 *
 * @example
 * readAuthorizationValues(req) // ['Bearer dap_…', 'Bearer dap_…'] for a repeated header
 */
export function readAuthorizationValues(message: NodeHeaderSource): readonly string[] {
  const first = message.headers.authorization
  // Node sets `headers.authorization` whenever the header appears at all (even empty), so its
  // absence spares the scan on requests without credentials.
  if (first === undefined) return NONE
  // `rawHeaders` rather than `headersDistinct`, which builds arrays for every header of the request.
  const raw = message.rawHeaders
  const values: string[] = []
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!
    // Stryker disable next-line ConditionalExpression: `true && …` is equivalent because the length test only spares a toLowerCase (the other mutant is killed by a 13-character name)
    if (name.length === 13 && name.toLowerCase() === 'authorization') values.push(raw[i + 1]!)
  }
  return values.length === 0 ? [first] : values
}

/**
 * Every `DPoP` header value of a Node request, in order (RFC 9449 §4.3 refuses more than one). Node
 * joins a repeated `DPoP` header into one value with `, `; `rawHeaders` keeps them apart.
 *
 * @example
 * readDpopValues(req) // ['eyJ0eXAiOiJkcG9wK2p3dCIs…']
 */
export function readDpopValues(message: NodeHeaderSource): readonly string[] {
  // Absent on every bearer request: one property read, no scan.
  if (message.headers.dpop === undefined) return NONE
  const raw = message.rawHeaders
  const values: string[] = []
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!
    if (name.length === 4 && name.toLowerCase() === 'dpop') values.push(raw[i + 1]!)
  }
  return values
}
