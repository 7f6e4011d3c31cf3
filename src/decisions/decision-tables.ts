import {
  compileExportRestrictions,
  type ExportRestrictionsInput,
} from '../restrictions/export-restrictions.js'
import { decide } from './decide.js'
import type { Decision } from './decision.js'
import { DATASET_LEVELS, PUBLIC_DATASET_LEVELS, PUBLIC_WORKFLOW_LEVELS, WORKFLOW_LEVELS } from './levels.js'
import { OPERATION_NAMES, OPERATIONS, type Operation } from './operations.js'
import type { Principal } from './principal.js'
import type { Resource } from './resources.js'
import { parseScopes, type Scope } from './scopes.js'

/** One enumerated case of the policy: inputs and the decision the core gives. */
export interface DecisionTableRow {
  readonly resource: 'dataset' | 'workflow' | 'organization'
  /** The token's scope in the resource's family (`public` when it has none). */
  readonly scope: Scope
  /** The resource's public level (datasets, workflows) or `-` (organizations). */
  readonly publicLevel: string
  /** The user's own level, or `admin` / `non-admin` for organizations. */
  readonly userLevel: string
  readonly operation: Operation
  /** 200 for an allow, else the denial's status. */
  readonly status: number
  /** `allow`, or the denial's code. */
  readonly code: string
  /** For `insufficient_scope`: the scope that would have sufficed. */
  readonly requiredScope?: string
}

/** One export-restriction example: the restriction, the request and the outcome. */
export interface ExportTableRow {
  readonly restriction: string
  readonly operation: Operation
  readonly request: string
  readonly status: number
  readonly code: string
}

/** The whole enumerated policy, as data. */
export interface DecisionTables {
  readonly decisions: readonly DecisionTableRow[]
  readonly exports: readonly ExportTableRow[]
}

const FAMILY_SCOPES = {
  dataset: ['public', 'data.overview', 'data.metadata', 'data.data', 'data.edit'],
  workflow: ['public', 'wokflow.read', 'workflow.write'],
  organization: ['public', 'organization.read', 'organization.write'],
} as const satisfies Record<DecisionTableRow['resource'], readonly Scope[]>

function principalWith(scope: Scope): Principal {
  return { kind: 'token', userId: 'user', scopes: parseScopes([scope]) }
}

function row(
  resource: DecisionTableRow['resource'],
  scope: Scope,
  publicLevel: string,
  userLevel: string,
  operation: Operation,
  decision: Decision,
): DecisionTableRow {
  if (decision.allowed)
    return { resource, scope, publicLevel, userLevel, operation, status: 200, code: 'allow' }
  const base = {
    resource,
    scope,
    publicLevel,
    userLevel,
    operation,
    status: decision.status,
    code: decision.code,
  }
  return decision.scope === undefined ? base : { ...base, requiredScope: decision.scope }
}

function operationsOf(kind: DecisionTableRow['resource']): Operation[] {
  return OPERATION_NAMES.filter((operation) => OPERATIONS[operation].need.kind === kind)
}

function resourceCases(kind: DecisionTableRow['resource']): [string, string, Resource][] {
  switch (kind) {
    case 'dataset':
      return PUBLIC_DATASET_LEVELS.flatMap((publicLevel) =>
        DATASET_LEVELS.map((userLevel): [string, string, Resource] => [
          publicLevel,
          userLevel,
          { kind, publicLevel, userLevel },
        ]),
      )
    case 'workflow':
      return PUBLIC_WORKFLOW_LEVELS.flatMap((publicLevel) =>
        WORKFLOW_LEVELS.map((userLevel): [string, string, Resource] => [
          publicLevel,
          userLevel,
          { kind, publicLevel, userLevel },
        ]),
      )
    case 'organization':
      return [
        ['-', 'admin', { kind, administered: true }],
        ['-', 'non-admin', { kind, administered: false }],
      ]
  }
}

const EXPORT_CASES: readonly [
  ExportRestrictionsInput,
  Operation,
  { clientAddress?: string; size?: { records?: number; bytes?: number } },
][] = [
  [{ allowedIps: ['10.0.0.0/8'] }, 'table.read', { clientAddress: '10.1.2.3' }],
  [{ allowedIps: ['10.0.0.0/8'] }, 'table.read', { clientAddress: '::ffff:10.1.2.3' }],
  [{ allowedIps: ['10.0.0.0/8'] }, 'table.read', { clientAddress: '192.168.1.5' }],
  [{ allowedIps: ['10.0.0.0/8'] }, 'table.read', { clientAddress: '::10.1.2.3' }],
  [{ allowedIps: ['10.0.0.0/8'] }, 'table.read', { clientAddress: '10.1.2.3:8080' }],
  [{ allowedIps: ['10.0.0.0/8'] }, 'dataset.metadata', { clientAddress: '192.168.1.5' }],
  [{ allowedIps: ['0.0.0.0/0'] }, 'query.run', { clientAddress: '2001:db8::1' }],
  [{ allowedIps: ['0.0.0.0/0', '::/0'] }, 'query.run', { clientAddress: '2001:db8::1' }],
  [{ allowedIps: [] }, 'export.create', { clientAddress: '10.1.2.3' }],
  [{ maxRecords: 0 }, 'export.create', {}],
  [{ maxRecords: 1000 }, 'table.read', { size: { records: 1000 } }],
  [{ maxRecords: 1000 }, 'table.read', { size: { records: 1001 } }],
  [{ maxBytes: 100000 }, 'export.create', { size: { bytes: 100000 } }],
  [{ maxBytes: 100000 }, 'export.create', { size: { bytes: 100001 } }],
  [{ maxBytes: 0, maxRecords: 0, allowedIps: [] }, 'dataset.overview', {}],
]

function describeRequest(request: {
  clientAddress?: string
  size?: { records?: number; bytes?: number }
}): string {
  const parts: string[] = []
  if (request.clientAddress !== undefined) parts.push(`from ${request.clientAddress}`)
  if (request.size?.records !== undefined) parts.push(`${request.size.records} records`)
  if (request.size?.bytes !== undefined) parts.push(`${request.size.bytes} bytes`)
  return parts.length === 0 ? 'any' : parts.join(', ')
}

/**
 * Enumerates the core's policy: every family scope × public level × user level × operation, and
 * the export-restriction examples. The decisions are the core's own, never a copy of them.
 *
 * @example
 * buildDecisionTables().decisions.find((r) => r.scope === 'data.metadata' && r.publicLevel === 'none')
 */
export function buildDecisionTables(): DecisionTables {
  const decisions: DecisionTableRow[] = []
  for (const kind of ['dataset', 'workflow', 'organization'] as const) {
    for (const scope of FAMILY_SCOPES[kind]) {
      const principal = principalWith(scope)
      for (const [publicLevel, userLevel, resource] of resourceCases(kind)) {
        for (const operation of operationsOf(kind)) {
          decisions.push(
            row(kind, scope, publicLevel, userLevel, operation, decide({ principal, operation, resource })),
          )
        }
      }
    }
  }
  const reader = principalWith('data.data')
  const exports = EXPORT_CASES.map(([input, operation, request]): ExportTableRow => {
    const resource: Resource = {
      kind: 'dataset',
      publicLevel: 'none',
      userLevel: 'data',
      exportRestrictions: compileExportRestrictions(input),
    }
    const decision = decide({ principal: reader, operation, resource, request })
    return {
      restriction: JSON.stringify(input),
      operation,
      request: describeRequest(request),
      status: decision.allowed ? 200 : decision.status,
      code: decision.allowed ? 'allow' : decision.code,
    }
  })
  return { decisions, exports }
}
