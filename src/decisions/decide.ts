import {
  checkClientAddress,
  checkExportSize,
  type ExportRestrictions,
  isExportRestrictions,
  sizeViolation,
} from '../restrictions/export-restrictions.js'
import { type Allow, type Decision, type Deny, deny, type ExportLimits } from './decision.js'
import { OPERATIONS, type Operation, type OperationSpec, scopeForNeed } from './operations.js'
import type { Principal } from './principal.js'
import type { OrganizationResource, Resource } from './resources.js'
import { ScopeSet } from './scopes.js'

/** Facts about the request that some decisions depend on. */
export interface RequestFacts {
  /** The client's address as the adapter resolved it (trusted proxies applied). */
  readonly clientAddress?: string | undefined
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

const INVALID_INPUT = deny('invalid_input')
const NOT_FOUND = deny('not_found')
const INSUFFICIENT_ACCESS = deny('insufficient_access')

// Level names to ranks with switches: V8 compares interned constant strings by identity, which
// is several times cheaper than a Map or keyed-object lookup on this hot path. Anything else is
// undefined, which every caller treats as a denial.
function datasetRank(level: unknown): number | undefined {
  switch (level) {
    case 'none':
      return 0
    case 'overview':
      return 1
    case 'metadata':
      return 2
    case 'data':
      return 3
    case 'edit':
      return 4
    default:
      return undefined
  }
}

function publicDatasetRank(level: unknown): number | undefined {
  return level === 'edit' ? undefined : datasetRank(level)
}

function workflowRank(level: unknown): number | undefined {
  switch (level) {
    case 'none':
      return 0
    case 'read':
      return 1
    case 'write':
      return 2
    default:
      return undefined
  }
}

function publicWorkflowRank(level: unknown): number | undefined {
  return level === 'write' ? undefined : workflowRank(level)
}

// The catalogue compiled for the hot path: ranks instead of level names, and the shared frozen
// answers each operation can give, so a decision is a few map lookups and compares and allocates
// nothing unless export limits apply.
/** @internal */
export interface CompiledOperation {
  readonly operation: Operation
  readonly kind: Resource['kind']
  readonly spec: OperationSpec
  readonly needRank: number
  readonly allow: Allow
  readonly scopeDenial: Deny
}

const COMPILED = new Map<Operation, CompiledOperation>(
  (Object.keys(OPERATIONS) as Operation[]).map((operation): [Operation, CompiledOperation] => {
    const spec: OperationSpec = OPERATIONS[operation]
    const need = spec.need
    const needRank =
      need.kind === 'dataset'
        ? datasetRank(need.level)!
        : need.kind === 'workflow'
          ? workflowRank(need.level)!
          : 1
    const allow: Allow = Object.freeze({ allowed: true, operation, dataContent: spec.dataContent })
    return [
      operation,
      {
        operation,
        kind: need.kind,
        spec,
        needRank,
        allow,
        scopeDenial: deny('insufficient_scope', scopeForNeed(need)),
      },
    ]
  }),
)

// A switch on the interned operation names costs a few nanoseconds less than a Map lookup, a
// sizeable share of a whole decision. A test checks that it covers exactly the catalogue.
const BY_NAME = Object.freeze(Object.fromEntries(COMPILED) as Record<Operation, CompiledOperation>)

/** @internal The compiled catalogue entry of an operation name, or undefined. */
export function compiledOperation(operation: unknown): CompiledOperation | undefined {
  switch (operation) {
    case 'dataset.list':
      return BY_NAME['dataset.list']
    case 'dataset.overview':
      return BY_NAME['dataset.overview']
    case 'dataset.metadata':
      return BY_NAME['dataset.metadata']
    case 'table.read':
      return BY_NAME['table.read']
    case 'query.run':
      return BY_NAME['query.run']
    case 'export.create':
      return BY_NAME['export.create']
    case 'dataset.create':
      return BY_NAME['dataset.create']
    case 'dataset.update':
      return BY_NAME['dataset.update']
    case 'dataset.delete':
      return BY_NAME['dataset.delete']
    case 'version.release':
      return BY_NAME['version.release']
    case 'workflow.read':
      return BY_NAME['workflow.read']
    case 'workflow.write':
      return BY_NAME['workflow.write']
    case 'workflow.run':
      return BY_NAME['workflow.run']
    case 'organization.read':
      return BY_NAME['organization.read']
    case 'organization.write':
      return BY_NAME['organization.write']
    default:
      return undefined
  }
}

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
  const compiled = input == null ? undefined : compiledOperation(input.operation)
  const scopes = input?.principal?.scopes
  const resource = input?.resource
  if (compiled === undefined || !(scopes instanceof ScopeSet) || resource == null) return INVALID_INPUT
  if (resource.kind !== compiled.kind) return INVALID_INPUT
  switch (resource.kind) {
    case 'dataset': {
      const denial = decideLeveled(
        compiled,
        publicDatasetRank(resource.publicLevel),
        resource.userLevel === undefined ? 0 : datasetRank(resource.userLevel),
        scopes.datasetCeiling,
      )
      if (denial !== undefined) return denial
      const restrictions = resource.exportRestrictions
      if (!compiled.spec.dataContent || restrictions === undefined) return compiled.allow
      return decideExport(compiled.operation, restrictions, input.request)
    }
    case 'workflow':
      return (
        decideLeveled(
          compiled,
          publicWorkflowRank(resource.publicLevel),
          resource.userLevel === undefined ? 0 : workflowRank(resource.userLevel),
          scopes.workflowCeiling,
        ) ?? compiled.allow
      )
    case 'organization':
      return decideOrganization(compiled, resource, scopes)
  }
}

function decideLeveled(
  compiled: CompiledOperation,
  publicLevel: number | undefined,
  userLevel: number | undefined,
  ceiling: number,
): Deny | undefined {
  if (publicLevel === undefined || userLevel === undefined) return INVALID_INPUT
  const need = compiled.needRank
  const effective = Math.max(publicLevel, Math.min(userLevel, ceiling))
  if (effective === 0) return NOT_FOUND
  if (effective >= need) return undefined
  return userLevel >= need ? compiled.scopeDenial : INSUFFICIENT_ACCESS
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
  if (maxBytes === undefined && maxRecords === undefined) return COMPILED.get(operation)!.allow
  const limits: ExportLimits = {
    ...(maxBytes === undefined ? {} : { maxBytes }),
    ...(maxRecords === undefined ? {} : { maxRecords }),
  }
  return Object.freeze({ allowed: true, operation, dataContent: true, limits: Object.freeze(limits) })
}

function decideOrganization(
  compiled: CompiledOperation,
  resource: OrganizationResource,
  scopes: ScopeSet,
): Decision {
  const need = compiled.spec.need
  if (need.kind !== 'organization' || typeof resource.administered !== 'boolean') return deny('invalid_input')
  // Organizations are never public: an existing one is 403 to non-admins, its absence 404 (the
  // resolver's answer), so no scope check can reveal more than the host already does.
  if (!resource.administered) return deny('insufficient_access')
  if (!scopes.has(need.scope)) return compiled.scopeDenial
  return compiled.allow
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
  if (limits === undefined || sizeViolation(limits, size) === undefined) return decision
  return deny('export_restricted')
}
