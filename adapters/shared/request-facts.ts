import type { RequestFacts } from '../../src/index.js'

const NO_FACTS: RequestFacts = Object.freeze({})

/**
 * The request facts a guard decides on, built without an `undefined` property (the core's types
 * use exact optional properties).
 *
 * @example
 * await policy.guard(principal, 'table.read', resolve, requestFacts(req.ip))
 */
export function requestFacts(clientAddress: string | undefined): RequestFacts {
  return clientAddress === undefined ? NO_FACTS : { clientAddress }
}
