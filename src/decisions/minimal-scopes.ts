import { InvalidArgumentError } from '../errors.js'
import { OPERATION_NAMES, type Operation, operationSpec, scopeForNeed } from './operations.js'
import { impliedScopes, parseScopes, type Scope, type ScopeSet } from './scopes.js'

/**
 * The smallest scope set that permits every listed operation on resources hidden from the public:
 * the tool for the contract's rule "request the minimum scopes needed".
 *
 * @throws {InvalidArgumentError} naming an operation that is not in the catalogue.
 * @example
 * minimalScopes(['dataset.metadata', 'table.read']).toString() // 'public data.data'
 */
export function minimalScopes(operations: readonly Operation[]): ScopeSet {
  const needed = new Set<Scope>()
  operations.forEach((operation, index) => {
    const spec = operationSpec(operation)
    if (spec === undefined) {
      throw new InvalidArgumentError(
        `operations[${index}]: unknown operation ${JSON.stringify(operation)}; expected one of ${OPERATION_NAMES.join(', ')}`,
      )
    }
    needed.add(scopeForNeed(spec.need))
  })
  // A scope implied by another one needed is redundant.
  for (const scope of [...needed]) {
    for (const implied of impliedScopes(scope)) needed.delete(implied)
  }
  return parseScopes([...needed])
}
