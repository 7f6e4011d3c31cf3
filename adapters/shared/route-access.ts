import { operationSpec } from '../../src/decisions/operations.js'
import { InvalidArgumentError, type Operation } from '../../src/index.js'

/**
 * Checks a route's requirement when the route is declared, so that a typo fails at startup
 * instead of denying (or worse, skipping) every request at run time.
 *
 * @throws {InvalidArgumentError} naming the route and the bad operation or resolver.
 * @example
 * checkRouteAccess('dataset.metadata', resolve, 'GET /api/v1/datasets/:owner/:name/metadata')
 */
export function checkRouteAccess(operation: unknown, resolve: unknown, route: string): Operation {
  if (operationSpec(operation) === undefined) {
    throw new InvalidArgumentError(`${route}: unknown operation ${JSON.stringify(operation)}`)
  }
  if (typeof resolve !== 'function') {
    throw new InvalidArgumentError(`${route}: operation ${operation} needs a resource resolver function`)
  }
  return operation as Operation
}
