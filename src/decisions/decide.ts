import {
  derivedValue,
  type ExportRestrictions,
  keepDerived,
  permittedExport,
  type RestrictionState,
  sizeViolation,
} from '../restrictions/export-restrictions.js'
import { type Allow, type Decision, type Deny, deny, type ExportLimits } from './decision.js'
import { PUBLIC_DATASET_LEVELS, PUBLIC_WORKFLOW_LEVELS } from './levels.js'
import {
  OPERATION_NAMES,
  OPERATIONS,
  type Operation,
  type OperationSpec,
  scopeForNeed,
} from './operations.js'
import type { Principal } from './principal.js'
import type { DatasetResource, OrganizationResource, Resource } from './resources.js'
import { isScopeSet, type ScopeSet } from './scopes.js'

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
const EXPORT_RESTRICTED = deny('export_restricted')

// Level names to ranks, and operation names to their compiled entries, by switches on string
// literals: V8 compares an interned constant by identity. On the catalogue mix this measured faster
// than a table indexed by a hash of the name, a Map or an object keyed by the names
// (bench/decision-mix.ts, on the built package). The cases spell out levels.ts's lists and
// OPERATION_NAMES; tests check that they cover exactly those lists, in order. Cases read from the
// lists (`case DATASET_LEVELS[0]:`) cost a load and a full string compare each in the bundle hosts
// run, where esbuild turns a module's top-level `const` into a `var`. Anything else ranks -1, which
// every caller treats as a denial.
function datasetRank(level: unknown): number {
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
  }
  return -1
}

function workflowRank(level: unknown): number {
  switch (level) {
    case 'none':
      return 0
    case 'read':
      return 1
    case 'write':
      return 2
  }
  return -1
}

// The public lists are prefixes of the full ones (the top level is never public).
const PUBLIC_DATASET_COUNT = PUBLIC_DATASET_LEVELS.length
const PUBLIC_WORKFLOW_COUNT = PUBLIC_WORKFLOW_LEVELS.length

// The catalogue compiled for the hot path: ranks instead of level names, and the shared frozen
// answers each operation can give, so a decision is a few compares and allocates nothing.
/** @internal */
export interface CompiledOperation {
  readonly operation: Operation
  readonly kind: Resource['kind']
  readonly spec: OperationSpec
  readonly needRank: number
  readonly allow: Allow
  readonly scopeDenial: Deny
  /**
   * Data-content operations only: the slot of the restrictions' state where the allow under their
   * caps is kept (-1 for every other operation, which no restriction concerns).
   */
  readonly contentSlot: number
}

// The content slot of an operation that no restriction concerns.
const NO_SLOT = -1

function compile(operation: Operation, index: number): CompiledOperation {
  const spec: OperationSpec = OPERATIONS[operation]
  const need = spec.need
  const needRank =
    need.kind === 'dataset'
      ? datasetRank(need.level)
      : need.kind === 'workflow'
        ? workflowRank(need.level)
        : // Ranked like the organization family's scopes: read 1, write 2 (ScopeSet.organizationCeiling).
          need.scope === 'organization.write'
          ? 2
          : 1
  return {
    operation,
    kind: need.kind,
    spec,
    needRank,
    allow: Object.freeze({ allowed: true, operation, dataContent: spec.dataContent }),
    scopeDenial: deny('insufficient_scope', scopeForNeed(need)),
    contentSlot: spec.dataContent ? index : NO_SLOT,
  }
}

// Index-aligned with OPERATION_NAMES. Not frozen: an element of a frozen array is read through a
// slower path, ~2 ns of every decision (measured on the built package, one request repeated). The
// array never leaves this module.
const COMPILED: readonly CompiledOperation[] = OPERATION_NAMES.map(compile)

/** @internal The compiled catalogue entry of an operation name, or undefined. */
export function compiledOperation(operation: unknown): CompiledOperation | undefined {
  switch (operation) {
    case 'dataset.list':
      return COMPILED[0]
    case 'dataset.overview':
      return COMPILED[1]
    case 'dataset.metadata':
      return COMPILED[2]
    case 'table.read':
      return COMPILED[3]
    case 'query.run':
      return COMPILED[4]
    case 'export.create':
      return COMPILED[5]
    case 'dataset.create':
      return COMPILED[6]
    case 'dataset.update':
      return COMPILED[7]
    case 'dataset.delete':
      return COMPILED[8]
    case 'version.release':
      return COMPILED[9]
    case 'workflow.read':
      return COMPILED[10]
    case 'workflow.write':
      return COMPILED[11]
    case 'workflow.run':
      return COMPILED[12]
    case 'organization.read':
      return COMPILED[13]
    case 'organization.write':
      return COMPILED[14]
    // Stryker disable next-line ConditionalExpression: equivalent because a switch that matches no case returns undefined anyway
    default:
      return undefined
  }
}

/**
 * Decides whether `principal` may perform `operation` on `resource` (docs/concepts.md,
 * docs/decision-tables.md).
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
  try {
    return decideRequest(input.principal, input.operation, input.resource, input.request)
  } catch {
    // No input at all, or a getter or a Proxy of the host's that throws: the input cannot be
    // evaluated, so it is denied like any other it cannot evaluate. The policy calls decideRequest
    // directly: there the adapters' admission turns a throw into a 503 told to `onError`.
    return INVALID_INPUT
  }
}

/**
 * @internal {@link decide} with the input's fields as arguments: the policy's `authorize` calls it,
 * so that an authorization allocates no input object.
 */
export function decideRequest(
  principal: Principal,
  operation: Operation,
  resource: Resource,
  request: RequestFacts | undefined,
): Decision {
  const compiled = compiledOperation(operation)
  const scopes = principal?.scopes
  if (compiled === undefined || !isScopeSet(scopes) || resource == null) return INVALID_INPUT
  const kind = resource.kind
  if (kind !== compiled.kind) return INVALID_INPUT
  let publicRank: number
  let userRank: number
  let ceiling: number
  if (kind === 'dataset') {
    publicRank = datasetRank(resource.publicLevel)
    if (publicRank >= PUBLIC_DATASET_COUNT) publicRank = -1
    const userLevel = resource.userLevel
    userRank = userLevel === undefined ? 0 : datasetRank(userLevel)
    ceiling = scopes.datasetCeiling
  } else if (kind === 'workflow') {
    publicRank = workflowRank(resource.publicLevel)
    if (publicRank >= PUBLIC_WORKFLOW_COUNT) publicRank = -1
    const userLevel = resource.userLevel
    userRank = userLevel === undefined ? 0 : workflowRank(userLevel)
    ceiling = scopes.workflowCeiling
  } else {
    return decideOrganization(compiled, resource, scopes)
  }
  if (publicRank < 0 || userRank < 0) return INVALID_INPUT
  const need = compiled.needRank
  const effective = Math.max(publicRank, Math.min(userRank, ceiling))
  // Written so that NaN (a ceiling that is not a number, on a forged or altered ScopeSet) denies.
  if (!(effective >= need)) {
    if (effective === 0) return NOT_FOUND
    return userRank >= need ? compiled.scopeDenial : INSUFFICIENT_ACCESS
  }
  // Only data-content operations, all on datasets, pass the dataset's export restrictions.
  if (compiled.contentSlot === NO_SLOT) return compiled.allow
  const restrictions = (resource as DatasetResource).exportRestrictions
  return restrictions === undefined ? compiled.allow : decideExport(compiled, restrictions, request)
}

function decideExport(
  compiled: CompiledOperation,
  restrictions: ExportRestrictions,
  request: RequestFacts | undefined,
): Decision {
  // Raw, uncompiled restrictions cannot be trusted to mean what the host intended: denied. The
  // size is checked even when none is declared: a cap of 0 blocks every export outright.
  const state = permittedExport(restrictions, request)
  if (state === undefined) return EXPORT_RESTRICTED
  // An allow under caps depends on the operation and the restrictions alone (both immutable): made
  // once per pair and kept in the restrictions' state, an allowed export allocates nothing and
  // looks nothing up by the restrictions (a WeakMap did: a gain on capped decisions measured by
  // `npm run bench`).
  return (
    (derivedValue(state, compiled.contentSlot) as Allow | undefined) ??
    cappedAllow(compiled, restrictions, state)
  )
}

function cappedAllow(
  compiled: CompiledOperation,
  restrictions: ExportRestrictions,
  state: RestrictionState,
): Allow {
  const { maxBytes, maxRecords } = restrictions
  let allow = compiled.allow
  if (maxBytes !== undefined || maxRecords !== undefined) {
    const limits: ExportLimits = {
      ...(maxBytes === undefined ? {} : { maxBytes }),
      ...(maxRecords === undefined ? {} : { maxRecords }),
    }
    allow = Object.freeze({
      allowed: true,
      operation: compiled.operation,
      dataContent: true,
      limits: Object.freeze(limits),
    })
  }
  return keepDerived(state, compiled.contentSlot, allow)
}

function decideOrganization(
  compiled: CompiledOperation,
  resource: OrganizationResource,
  scopes: ScopeSet,
): Decision {
  if (typeof resource.administered !== 'boolean') return INVALID_INPUT
  // Organizations are never public: an existing one is 403 to non-admins, its absence 404 (the
  // resolver's answer), so no scope check can reveal more than the host already does.
  if (!resource.administered) return INSUFFICIENT_ACCESS
  // The family's ceiling against the need's rank, as for datasets and workflows: no Map lookup of
  // the scope's bit, a gain measured on organization decisions by `npm run bench`.
  return scopes.organizationCeiling >= compiled.needRank ? compiled.allow : compiled.scopeDenial
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
