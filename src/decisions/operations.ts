import type { DatasetLevel, WorkflowLevel } from './levels.js'
import type { Scope } from './scopes.js'

/** What an operation needs: a level on a dataset or workflow, or an organization's admin scope. */
export type OperationNeed =
  | { readonly kind: 'dataset'; readonly level: Exclude<DatasetLevel, 'none'> }
  | { readonly kind: 'workflow'; readonly level: Exclude<WorkflowLevel, 'none'> }
  | { readonly kind: 'organization'; readonly scope: 'organization.read' | 'organization.write' }

/** One entry of the operation catalogue (docs/concepts.md). */
export interface OperationSpec {
  /** What the caller must hold. */
  readonly need: OperationNeed
  /** True when the response carries data content (table rows), so export restrictions apply. */
  readonly dataContent: boolean
}

/**
 * The operation catalogue: every operation the policy decides, with what it needs and whether its
 * response carries data content. Names are the reference names of docs/concepts.md.
 */
export const OPERATIONS = {
  'dataset.list': { need: { kind: 'dataset', level: 'overview' }, dataContent: false },
  'dataset.overview': { need: { kind: 'dataset', level: 'overview' }, dataContent: false },
  'dataset.metadata': { need: { kind: 'dataset', level: 'metadata' }, dataContent: false },
  'table.read': { need: { kind: 'dataset', level: 'data' }, dataContent: true },
  'query.run': { need: { kind: 'dataset', level: 'data' }, dataContent: true },
  'export.create': { need: { kind: 'dataset', level: 'data' }, dataContent: true },
  'dataset.create': { need: { kind: 'dataset', level: 'edit' }, dataContent: false },
  'dataset.update': { need: { kind: 'dataset', level: 'edit' }, dataContent: false },
  'dataset.delete': { need: { kind: 'dataset', level: 'edit' }, dataContent: false },
  'version.release': { need: { kind: 'dataset', level: 'edit' }, dataContent: false },
  'workflow.read': { need: { kind: 'workflow', level: 'read' }, dataContent: false },
  'workflow.write': { need: { kind: 'workflow', level: 'write' }, dataContent: false },
  'workflow.run': { need: { kind: 'workflow', level: 'write' }, dataContent: false },
  'organization.read': { need: { kind: 'organization', scope: 'organization.read' }, dataContent: false },
  'organization.write': { need: { kind: 'organization', scope: 'organization.write' }, dataContent: false },
} as const satisfies Record<string, OperationSpec>

// Frozen to the leaves: the catalogue is shared by every policy in the process and handed out
// (`operationSpec`, data-access-policy/testing), and an entry changed after load would change what
// `minimalScopes`, the challenges' scopes and the MCP gate answer for every caller. Statements at
// the module's top, not a function whose mutant would fail the module's load (which the mutation
// runner counts as a survivor rather than a failing test).
for (const spec of Object.values(OPERATIONS)) {
  Object.freeze(spec.need)
  Object.freeze(spec)
}
Object.freeze(OPERATIONS)

/** The name of an operation in the catalogue. */
export type Operation = keyof typeof OPERATIONS

/** Every operation name, in catalogue order. */
export const OPERATION_NAMES = Object.freeze(Object.keys(OPERATIONS)) as readonly Operation[]

/** The catalogue entry of an operation, or undefined for a name that is not in it. */
export function operationSpec(operation: unknown): OperationSpec | undefined {
  return typeof operation === 'string' && Object.hasOwn(OPERATIONS, operation)
    ? OPERATIONS[operation as Operation]
    : undefined
}

const DATASET_SCOPE: Readonly<Record<Exclude<DatasetLevel, 'none'>, Scope>> = {
  overview: 'data.overview',
  metadata: 'data.metadata',
  data: 'data.data',
  edit: 'data.edit',
}

const WORKFLOW_SCOPE: Readonly<Record<Exclude<WorkflowLevel, 'none'>, Scope>> = {
  read: 'wokflow.read',
  write: 'workflow.write',
}

/** The narrowest scope that lets a token perform `need` on a resource hidden from the public. */
export function scopeForNeed(need: OperationNeed): Scope {
  switch (need.kind) {
    case 'dataset':
      return DATASET_SCOPE[need.level]
    case 'workflow':
      return WORKFLOW_SCOPE[need.level]
    case 'organization':
      return need.scope
  }
}
