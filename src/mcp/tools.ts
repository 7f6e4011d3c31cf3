import { OPERATION_NAMES, type Operation, operationSpec, scopeForNeed } from '../decisions/operations.js'
import { impliedScopes, parseScopes, type Scope, type ScopeSet } from '../decisions/scopes.js'
import { InvalidArgumentError } from '../errors.js'

/** Which operation of the catalogue each MCP tool performs, by tool name. */
export type McpToolOperations = Readonly<Record<string, Operation>>

/**
 * The tools of the reference data API and the operations they perform: the map a host starts from
 * and extends with its own tools (`{ ...MCP_TOOL_OPERATIONS, run_workflow: 'workflow.run' }`).
 *
 * @example
 * MCP_TOOL_OPERATIONS.read_table_rows // 'table.read'
 */
export const MCP_TOOL_OPERATIONS: McpToolOperations = Object.freeze({
  list_datasets: 'dataset.list',
  get_dataset: 'dataset.overview',
  get_dataset_metadata: 'dataset.metadata',
  read_table_rows: 'table.read',
  get_workflow: 'workflow.read',
})

/**
 * Checks a tool map: every tool name non-empty and every operation in the catalogue. Answers a
 * frozen copy, so that a map changed after the check cannot change what is enforced.
 *
 * @throws {InvalidArgumentError} naming the tool and the operation it maps to.
 * @example
 * checkToolOperations({ ...MCP_TOOL_OPERATIONS, run_workflow: 'workflow.run' })
 */
export function checkToolOperations(tools: McpToolOperations): McpToolOperations {
  if (typeof tools !== 'object' || tools === null || Array.isArray(tools)) {
    throw new InvalidArgumentError(
      `tools must be an object mapping tool names to operations; got ${String(tools)}`,
    )
  }
  const checked: Record<string, Operation> = {}
  for (const [name, operation] of Object.entries(tools)) {
    if (name === '' || operationSpec(operation) === undefined) {
      throw new InvalidArgumentError(
        `tools[${JSON.stringify(name)}]: expected a non-empty tool name mapped to one of ${OPERATION_NAMES.join(', ')}; got ${JSON.stringify(operation)}`,
      )
    }
    checked[name] = operation
  }
  return Object.freeze(checked)
}

/**
 * The scope a tool needs on resources hidden from the public (its operation's narrowest scope), or
 * undefined for a tool the map does not name: the MCP server answers that one itself.
 *
 * @example
 * toolScope(MCP_TOOL_OPERATIONS, 'get_workflow') // 'wokflow.read'
 */
export function toolScope(tools: McpToolOperations, tool: string): Scope | undefined {
  if (!Object.hasOwn(tools, tool)) return undefined
  const spec = operationSpec(tools[tool])
  return spec === undefined ? undefined : scopeForNeed(spec.need)
}

/**
 * The fewest scope names that grant everything in `scopes`: a scope another one implies is left
 * out, and so is `public`, which every token holds. In contract order.
 *
 * @example
 * reduceScopes(parseScopes('data.overview data.data wokflow.read')) // ['data.data', 'wokflow.read']
 */
export function reduceScopes(scopes: ScopeSet): readonly Scope[] {
  const kept = new Set<Scope>(scopes.granted)
  kept.delete('public')
  for (const scope of scopes.granted) for (const implied of impliedScopes(scope)) kept.delete(implied)
  return scopes.granted.filter((scope) => kept.has(scope))
}

/**
 * The scopes a client needs to hold, in the space-delimited OAuth form: what it holds already
 * (so that a new authorization loses nothing) with what it lacks.
 *
 * @example
 * accumulatedScope(parseScopes('data.overview'), ['wokflow.read']) // 'data.overview wokflow.read'
 */
export function accumulatedScope(held: ScopeSet, needed: readonly Scope[]): string {
  return reduceScopes(parseScopes([...held.granted, ...needed])).join(' ')
}
