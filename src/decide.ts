import { type Allow, type Decision, deny, type ExportLimits } from './decision.js'
import {
  checkClientAddress,
  checkExportSize,
  type ExportRestrictions,
  isExportRestrictions,
} from './export-restrictions.js'
import { DATASET_LEVELS, PUBLIC_DATASET_LEVELS, PUBLIC_WORKFLOW_LEVELS, rankOf, WORKFLOW_LEVELS } from './levels.js'
import { OPERATIONS, type Operation, type OperationSpec, operationSpec, scopeForNeed } from './operations.js'
import type { Principal } from './principal.js'
import type { Resource } from './resources.js'
import { ScopeSet } from './scopes.js'

/** Facts about the request that some decisions depend on. */
export interface RequestFacts {
  /** The client's address as the adapter resolved it (trusted proxies applied). */
  readonly clientAddress?: string
  /** What a data-content response is about to carry, when the handler knows it already. */
  readonly size?: { readonly records?: number; readonly bytes?: number }
}

/** What {@link decide} is asked. */
export interface DecideInput {
  readonly principal: Principal
  readonly operation: Operation
  readonly resource: Resource
  readonly request?: RequestFacts
}

// Allow decisions without limits are shared, frozen constants: the common path allocates nothing.
const PLAIN_ALLOW = new Map<Operation, Allow>(
  (Object.keys(OPERATIONS) as Operation[]).map((operation) => [
    operation,
    Object.freeze({ allowed: true, operation, dataContent: OPERATIONS[operation].dataContent }),
  ]),
)

/**
 * Decides whether `principal` may perform `operation` on `resource` (design §3, §5).
 * Synchronous and pure; anything it cannot evaluate is a denial.
 *
 * For datasets and workflows, `effective = max(public level, min(user level, scope ceiling))`:
 * `none` is 404 (existence stays hidden), short of the need is 403 `insufficient_scope` when the
 * user's own level would suffice with a wider scope, else 403 `insufficient_access`. An allowed
 * data-content operation then passes the dataset's export restrictions.
 *
 * @example
 * decide({ principal, operation: 'dataset.metadata',
 *          resource: { kind: 'dataset', publicLevel: 'none', userLevel: 'edit' } })
 * // → { allowed: false, status: 403, code: 'insufficient_scope', scope: 'data.metadata', … }
 */
export function decide(input: DecideInput): Decision {
  const spec = operationSpec(input?.operation)
  const principal = input?.principal
  const resource = input?.resource
  if (spec === undefined || !(principal?.scopes instanceof ScopeSet) || resource == null) {
    return deny('invalid_input')
  }
  if (resource.kind !== spec.need.kind) return deny('invalid_input')
  switch (spec.need.kind) {
    case 'dataset':
      return decideDataset(input, spec, principal.scopes)
    case 'workflow':
      return decideWorkflow(input, spec, principal.scopes)
    case 'organization':
      return decideOrganization(input, spec, principal.scopes)
  }
}

function decideLeveled(
  need: number,
  publicLevel: number,
  userLevel: number,
  ceiling: number,
  spec: OperationSpec,
): Decision | undefined {
  if (need < 1 || publicLevel < 0 || userLevel < 0) return deny('invalid_input')
  const effective = Math.max(publicLevel, Math.min(userLevel, ceiling))
  if (effective === 0) return deny('not_found')
  if (effective >= need) return undefined
  return userLevel >= need ? deny('insufficient_scope', scopeForNeed(spec.need)) : deny('insufficient_access')
}

function decideDataset(input: DecideInput, spec: OperationSpec, scopes: ScopeSet): Decision {
  const resource = input.resource as Extract<Resource, { kind: 'dataset' }>
  const need = spec.need.kind === 'dataset' ? rankOf(DATASET_LEVELS, spec.need.level) : -1
  const denial = decideLeveled(
    need,
    rankOf(PUBLIC_DATASET_LEVELS, resource.publicLevel),
    resource.userLevel === undefined ? 0 : rankOf(DATASET_LEVELS, resource.userLevel),
    scopes.datasetCeiling,
    spec,
  )
  if (denial !== undefined) return denial
  const operation = input.operation
  const restrictions = resource.exportRestrictions
  if (!spec.dataContent || restrictions === undefined) return PLAIN_ALLOW.get(operation)!
  return decideExport(operation, restrictions, input.request)
}

function decideExport(
  operation: Operation,
  restrictions: ExportRestrictions,
  request: RequestFacts | undefined,
): Decision {
  // Raw, uncompiled restrictions cannot be trusted to mean what the host intended: deny.
  if (!isExportRestrictions(restrictions)) return deny('export_restricted')
  if (!checkClientAddress(restrictions, request?.clientAddress)) return deny('export_restricted')
  // Checked even without a declared size: a cap of 0 blocks every export outright.
  if (checkExportSize(restrictions, request?.size ?? {}) !== undefined) return deny('export_restricted')
  const { maxBytes, maxRecords } = restrictions
  if (maxBytes === undefined && maxRecords === undefined) return PLAIN_ALLOW.get(operation)!
  const limits: ExportLimits = {
    ...(maxBytes === undefined ? {} : { maxBytes }),
    ...(maxRecords === undefined ? {} : { maxRecords }),
  }
  return Object.freeze({ allowed: true, operation, dataContent: true, limits: Object.freeze(limits) })
}

function decideWorkflow(input: DecideInput, spec: OperationSpec, scopes: ScopeSet): Decision {
  const resource = input.resource as Extract<Resource, { kind: 'workflow' }>
  const need = spec.need.kind === 'workflow' ? rankOf(WORKFLOW_LEVELS, spec.need.level) : -1
  const denial = decideLeveled(
    need,
    rankOf(PUBLIC_WORKFLOW_LEVELS, resource.publicLevel),
    resource.userLevel === undefined ? 0 : rankOf(WORKFLOW_LEVELS, resource.userLevel),
    scopes.workflowCeiling,
    spec,
  )
  return denial ?? PLAIN_ALLOW.get(input.operation)!
}

function decideOrganization(input: DecideInput, spec: OperationSpec, scopes: ScopeSet): Decision {
  const resource = input.resource as Extract<Resource, { kind: 'organization' }>
  if (spec.need.kind !== 'organization' || typeof resource.administered !== 'boolean') {
    return deny('invalid_input')
  }
  // Organizations are never public: an existing one is 403 to non-admins, its absence 404 (the
  // resolver's answer), so no scope check can reveal more than the host already does.
  if (!resource.administered) return deny('insufficient_access')
  if (!scopes.has(spec.need.scope)) return deny('insufficient_scope', spec.need.scope)
  return PLAIN_ALLOW.get(input.operation)!
}

/**
 * Checks the size a data-content handler is about to send against an allow's limits.
 * Call it before the first byte; a denial is 403 `export_restricted`.
 *
 * @example
 * const verdict = checkResponseSize(decision, { records: rows.length })
 */
export function checkResponseSize(
  decision: Allow,
  size: { readonly records?: number; readonly bytes?: number },
): Decision {
  const limits = decision.limits
  if (limits === undefined) return decision
  if (exceeds(size.records, limits.maxRecords) || exceeds(size.bytes, limits.maxBytes)) {
    return deny('export_restricted')
  }
  return decision
}

function exceeds(value: number | undefined, cap: number | undefined): boolean {
  if (cap === undefined || value === undefined) return false
  return !(Number.isSafeInteger(value) && value >= 0 && value <= cap)
}
