import { type ExportRestrictions, permitsExport, sizeViolation } from '../restrictions/export-restrictions.js'
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
const EXPORT_RESTRICTED = deny('export_restricted')

// Level names to ranks, and operation names to their compiled entries, by switches on string
// literals: V8 compares an interned constant by identity. The cases spell out levels.ts's lists and
// OPERATION_NAMES; tests check that they cover exactly those lists, in order. Cases read from the
// lists (`case DATASET_LEVELS[0]:`) cost a load and a full string compare each in the bundle hosts
// run, where esbuild turns a module's top-level `const` into a `var`: a gain measured on the built
// package by bench/decision-mix.ts (its uncapped requests). Anything else is undefined, which
// every caller treats as a denial.
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
    // Stryker disable next-line ConditionalExpression: equivalent because a switch that matches no case returns undefined anyway
    default:
      return undefined
  }
}

function workflowRank(level: unknown): number | undefined {
  switch (level) {
    case 'none':
      return 0
    case 'read':
      return 1
    case 'write':
      return 2
    // Stryker disable next-line ConditionalExpression: equivalent because a switch that matches no case returns undefined anyway
    default:
      return undefined
  }
}

// The public lists are prefixes of the full ones (the top level is never public).
function publicRank(rank: number | undefined, publicLevels: readonly unknown[]): number | undefined {
  // Stryker disable next-line ConditionalExpression: equivalent because undefined < n is false, which also answers undefined
  return rank !== undefined && rank < publicLevels.length ? rank : undefined
}

// The catalogue compiled for the hot path: ranks instead of level names, and the shared frozen
// answers each operation can give, so a decision is a few compares and allocates nothing unless
// export limits apply.
/** @internal */
export interface CompiledOperation {
  readonly operation: Operation
  readonly kind: Resource['kind']
  readonly spec: OperationSpec
  readonly needRank: number
  readonly allow: Allow
  readonly scopeDenial: Deny
  /** The allows carrying the caps of each dataset's restrictions, made on first use. */
  readonly cappedAllows: WeakMap<ExportRestrictions, Allow>
}

function compile(operation: Operation): CompiledOperation {
  const spec: OperationSpec = OPERATIONS[operation]
  const need = spec.need
  const needRank =
    need.kind === 'dataset'
      ? datasetRank(need.level)!
      : need.kind === 'workflow'
        ? workflowRank(need.level)!
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
    cappedAllows: new WeakMap(),
  }
}

// Index-aligned with OPERATION_NAMES.
const COMPILED: readonly CompiledOperation[] = Object.freeze(OPERATION_NAMES.map(compile))

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
  if (input == null) return INVALID_INPUT
  return decideRequest(input.principal, input.operation, input.resource, input.request)
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
  if (compiled === undefined || !(scopes instanceof ScopeSet) || resource == null) return INVALID_INPUT
  if (resource.kind !== compiled.kind) return INVALID_INPUT
  switch (resource.kind) {
    case 'dataset': {
      const denial = decideLeveled(
        compiled,
        publicRank(datasetRank(resource.publicLevel), PUBLIC_DATASET_LEVELS),
        resource.userLevel === undefined ? 0 : datasetRank(resource.userLevel),
        scopes.datasetCeiling,
      )
      if (denial !== undefined) return denial
      const restrictions = resource.exportRestrictions
      if (!compiled.spec.dataContent || restrictions === undefined) return compiled.allow
      return decideExport(compiled, restrictions, request)
    }
    case 'workflow':
      return (
        decideLeveled(
          compiled,
          publicRank(workflowRank(resource.publicLevel), PUBLIC_WORKFLOW_LEVELS),
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
  compiled: CompiledOperation,
  restrictions: ExportRestrictions,
  request: RequestFacts | undefined,
): Decision {
  // Raw, uncompiled restrictions cannot be trusted to mean what the host intended: denied. The
  // size is checked even when none is declared: a cap of 0 blocks every export outright.
  if (!permitsExport(restrictions, request?.clientAddress, request?.size)) return EXPORT_RESTRICTED
  // An allow under caps depends on the operation and the restrictions alone (both immutable): made
  // once per pair and shared, an allowed export allocates nothing, a gain measured by `npm run bench`.
  return compiled.cappedAllows.get(restrictions) ?? cappedAllow(compiled, restrictions)
}

function cappedAllow(compiled: CompiledOperation, restrictions: ExportRestrictions): Allow {
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
  compiled.cappedAllows.set(restrictions, allow)
  return allow
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
