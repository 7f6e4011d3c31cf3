// The whole catalogue as a host's requests reach `decide`: datasets, workflows and organizations,
// data-content operations with and without export restrictions, principals shaped as
// authentication makes them (API and OAuth tokens), beside the hand-written floor: the same
// requests, as the host has them, decided by the fastest plain code (switches from names to
// integers, a Set of scope names, integer compares). test/bench-agreement.test.ts checks that they
// answer alike on every request.
import type { DecideInput, decide } from '../src/decisions/decide.js'
import type { Decision } from '../src/decisions/decision.js'
import {
  DATASET_LEVELS,
  PUBLIC_DATASET_LEVELS,
  PUBLIC_WORKFLOW_LEVELS,
  WORKFLOW_LEVELS,
} from '../src/decisions/levels.js'
import type { Operation } from '../src/decisions/operations.js'
import type { Principal } from '../src/decisions/principal.js'
import type { Resource } from '../src/decisions/resources.js'
import type { parseScopes, Scope } from '../src/decisions/scopes.js'
import type { compileExportRestrictions } from '../src/restrictions/export-restrictions.js'
import { shuffled } from './harness.js'

/**
 * The library entry points the mix runs on: the built package in `npm run bench` (what hosts run:
 * one bundle), the sources in the agreement test.
 */
export interface DecisionLibrary {
  readonly decide: typeof decide
  readonly parseScopes: typeof parseScopes
  readonly compileExportRestrictions: typeof compileExportRestrictions
}

type Family = 'dataset' | 'workflow' | 'organization'

/** One request of the mix, in the floor's terms: ranks, the scope held, the caps. */
export interface CatalogueRequest {
  readonly family: Family
  readonly operation: Operation
  /** The principal's one scope in the family (`public` for none). */
  readonly scope: Scope
  /** OAuth principals carry a client id: a second principal shape. */
  readonly oauth: boolean
  readonly publicRank: number
  readonly userRank: number
  readonly administered: boolean
  readonly restrictions?: { readonly maxRecords?: number; readonly maxBytes?: number }
}

const DATASET_SCOPES: readonly Scope[] = [
  'public',
  'data.overview',
  'data.metadata',
  'data.data',
  'data.edit',
]
const WORKFLOW_SCOPES: readonly Scope[] = ['public', 'wokflow.read', 'workflow.write']
const ORGANIZATION_SCOPES: readonly Scope[] = ['public', 'organization.read', 'organization.write']
const DATASET_OPERATIONS: readonly Operation[] = [
  'dataset.overview',
  'dataset.metadata',
  'table.read',
  'dataset.update',
]
const WORKFLOW_OPERATIONS: readonly Operation[] = ['workflow.read', 'workflow.write', 'workflow.run']
const NEED: Partial<Record<Operation, number>> = {
  'dataset.overview': 1,
  'dataset.metadata': 2,
  'table.read': 3,
  'query.run': 3,
  'export.create': 3,
  'dataset.update': 4,
  'workflow.read': 1,
  'workflow.write': 2,
  'workflow.run': 2,
}
const SCOPE_FOR: Partial<Record<Operation, Scope>> = {
  'dataset.overview': 'data.overview',
  'dataset.metadata': 'data.metadata',
  'table.read': 'data.data',
  'query.run': 'data.data',
  'export.create': 'data.data',
  'dataset.update': 'data.edit',
  'workflow.read': 'wokflow.read',
  'workflow.write': 'workflow.write',
  'workflow.run': 'workflow.write',
  'organization.read': 'organization.read',
  'organization.write': 'organization.write',
}
const CAPS = [{ maxRecords: 1000 }, { maxBytes: 1_000_000 }, { maxRecords: 1000, maxBytes: 1_000_000 }]

/**
 * 682 distinct requests, shuffled deterministically: every dataset level combination for four
 * operations (400), every workflow combination for three (54), organizations (12), and
 * three data-content operations on datasets with export caps (216), half of the principals OAuth tokens.
 */
export function buildCatalogueMix(): CatalogueRequest[] {
  const mix: CatalogueRequest[] = []
  let n = 0
  const oauth = () => n++ % 2 === 1
  // Every scope held × public level × user level, for each operation of a family.
  const grid = (
    family: 'dataset' | 'workflow',
    operations: readonly Operation[],
    scopes: readonly Scope[],
    publicLevels: number,
    userLevels: number,
  ) => {
    for (const operation of operations)
      for (const scope of scopes)
        for (let publicRank = 0; publicRank < publicLevels; publicRank++)
          for (let userRank = 0; userRank < userLevels; userRank++)
            mix.push({ family, operation, scope, oauth: oauth(), publicRank, userRank, administered: false })
  }
  grid('dataset', DATASET_OPERATIONS, DATASET_SCOPES, PUBLIC_DATASET_LEVELS.length, DATASET_LEVELS.length)
  grid(
    'workflow',
    WORKFLOW_OPERATIONS,
    WORKFLOW_SCOPES,
    PUBLIC_WORKFLOW_LEVELS.length,
    WORKFLOW_LEVELS.length,
  )
  for (const operation of ['organization.read', 'organization.write'] as const)
    for (const scope of ORGANIZATION_SCOPES)
      for (const administered of [false, true])
        mix.push({
          family: 'organization',
          operation,
          scope,
          oauth: oauth(),
          publicRank: 0,
          userRank: 0,
          administered,
        })
  for (const operation of ['table.read', 'query.run', 'export.create'] as const)
    for (const restrictions of CAPS)
      for (const scope of DATASET_SCOPES.slice(1))
        for (const publicRank of [0, 3])
          for (const userRank of [0, 3, 4])
            mix.push({
              family: 'dataset',
              operation,
              scope,
              oauth: oauth(),
              publicRank,
              userRank,
              administered: false,
              restrictions,
            })
  return shuffled(mix)
}

/** The rule, for reference: whether the request is allowed. */
export function catalogueExpected(request: CatalogueRequest): boolean {
  if (request.family === 'organization') {
    // organization.write implies organization.read.
    const held = ORGANIZATION_SCOPES.indexOf(request.scope)
    return request.administered && held >= ORGANIZATION_SCOPES.indexOf(SCOPE_FOR[request.operation]!)
  }
  const need = NEED[request.operation]!
  const scopes = request.family === 'dataset' ? DATASET_SCOPES : WORKFLOW_SCOPES
  const ceiling = scopes.indexOf(request.scope)
  return Math.max(request.publicRank, Math.min(request.userRank, ceiling)) >= need
}

/** `decide` on inputs built once per request, as an adapter's resolver would hand them over. */
export function decideCandidate(
  library: DecisionLibrary,
  mix: readonly CatalogueRequest[],
): (i: number) => Decision {
  // As authentication makes them: frozen, with the token's id and kind, a client id for OAuth.
  const principals = new Map<string, Principal>()
  const principalFor = (scope: Scope, oauth: boolean): Principal => {
    const key = `${scope} ${oauth}`
    let principal = principals.get(key)
    if (principal === undefined) {
      const fields = {
        kind: 'token',
        userId: 'u',
        scopes: library.parseScopes([scope]),
        tokenId: 't',
      } as const
      principal = Object.freeze(
        oauth ? { ...fields, tokenKind: 'oauth', clientId: 'c' } : { ...fields, tokenKind: 'api' },
      )
      principals.set(key, principal)
    }
    return principal
  }
  const compiled = new Map(CAPS.map((caps) => [caps, library.compileExportRestrictions(caps)]))
  const inputs: DecideInput[] = mix.map((r) => ({
    principal: principalFor(r.scope, r.oauth),
    operation: r.operation,
    resource: resourceOf(r, r.restrictions === undefined ? undefined : compiled.get(r.restrictions)),
  }))
  const n = inputs.length
  const decide = library.decide
  return (i) => decide(inputs[i % n]!)
}

/** A request's resource as a resolver hands it over: level names, the dataset's restrictions. */
function resourceOf(request: CatalogueRequest, restrictions: object | undefined): Resource {
  if (request.family === 'organization') return { kind: 'organization', administered: request.administered }
  if (request.family === 'workflow')
    return {
      kind: 'workflow',
      publicLevel: PUBLIC_WORKFLOW_LEVELS[request.publicRank]!,
      userLevel: WORKFLOW_LEVELS[request.userRank]!,
    }
  const levels = {
    kind: 'dataset',
    publicLevel: PUBLIC_DATASET_LEVELS[request.publicRank]!,
    userLevel: DATASET_LEVELS[request.userRank]!,
  } as const
  return restrictions === undefined ? levels : { ...levels, exportRestrictions: restrictions }
}

// Each scope with the narrower ones of its family it implies: the Set a host would keep per token.
function impliedSet(scope: Scope): Set<string> {
  for (const family of [DATASET_SCOPES, WORKFLOW_SCOPES, ORGANIZATION_SCOPES]) {
    const rank = family.indexOf(scope)
    if (rank > 0) return new Set(family.slice(1, rank + 1))
  }
  return new Set()
}

// The floor's lookups, written as a host would write them for speed: switches on the names (on the
// catalogue mix faster than an object or a Map keyed by them).
function floorDatasetRank(level: string): number {
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

function floorWorkflowRank(level: string): number {
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

function floorNeed(operation: string): number {
  switch (operation) {
    case 'dataset.list':
    case 'dataset.overview':
    case 'workflow.read':
    case 'organization.read':
      return 1
    case 'dataset.metadata':
    case 'workflow.write':
    case 'workflow.run':
    case 'organization.write':
      return 2
    case 'table.read':
    case 'query.run':
    case 'export.create':
      return 3
  }
  return 4
}

function floorScope(operation: string): string {
  switch (operation) {
    case 'dataset.list':
    case 'dataset.overview':
      return 'data.overview'
    case 'dataset.metadata':
      return 'data.metadata'
    case 'table.read':
    case 'query.run':
    case 'export.create':
      return 'data.data'
    case 'workflow.read':
      return 'wokflow.read'
    case 'workflow.write':
    case 'workflow.run':
      return 'workflow.write'
    case 'organization.read':
      return 'organization.read'
    case 'organization.write':
      return 'organization.write'
  }
  return 'data.edit'
}

/**
 * The floor: the same requests as the host has them (an operation name, the resource a resolver
 * returns, the token's scopes as a Set of names) decided by hand-written code, the shape design
 * §11 names: names to integers, one `Set.has`, integer compares. It answers whether the request is
 * allowed (no 404/403 distinction, no frozen decision), trusts its input, and hands an allowed
 * data-content request's caps on as they are (their object, for the handler to meter), unchecked.
 */
export function floorCandidate(mix: readonly CatalogueRequest[]): (i: number) => boolean | object {
  const sets = new Map<Scope, Set<string>>()
  const requests = mix.map((r) => {
    if (!sets.has(r.scope)) sets.set(r.scope, impliedSet(r.scope))
    return {
      scopes: sets.get(r.scope)!,
      operation: r.operation as string,
      resource: resourceOf(r, r.restrictions),
    }
  })
  const n = requests.length
  return (i) => {
    const request = requests[i % n]!
    const resource = request.resource
    const operation = request.operation
    if (resource.kind === 'organization')
      return resource.administered && request.scopes.has(floorScope(operation))
    const need = floorNeed(operation)
    if (resource.kind === 'workflow')
      return (
        floorWorkflowRank(resource.publicLevel) >= need ||
        (floorWorkflowRank(resource.userLevel!) >= need && request.scopes.has(floorScope(operation)))
      )
    const allowed =
      floorDatasetRank(resource.publicLevel) >= need ||
      (floorDatasetRank(resource.userLevel!) >= need && request.scopes.has(floorScope(operation)))
    // The data-content operations are the dataset ones that need `data`: their caps go to the handler.
    return allowed && need === 3 ? (resource.exportRestrictions ?? true) : allowed
  }
}

/**
 * What the harness itself costs with every answer known in advance: ranks, the need and a Set
 * precomputed per request, nothing read from the request at decision time. Not a way a host can
 * decide (its resolver returns level names); shown beside the floor so that the page says how much
 * of each figure is the loop around it.
 */
export function precomputedCandidate(mix: readonly CatalogueRequest[]): (i: number) => boolean {
  const sets = new Map<Scope, Set<string>>()
  const requests = mix.map((r) => {
    if (!sets.has(r.scope)) sets.set(r.scope, impliedSet(r.scope))
    return {
      organization: r.family === 'organization',
      administered: r.administered,
      scopes: sets.get(r.scope)!,
      need: NEED[r.operation] ?? 0,
      scope: SCOPE_FOR[r.operation]!,
      publicRank: r.publicRank,
      userRank: r.userRank,
    }
  })
  const n = requests.length
  return (i) => {
    const r = requests[i % n]!
    if (r.organization) return r.administered && r.scopes.has(r.scope)
    return r.publicRank >= r.need || (r.userRank >= r.need && r.scopes.has(r.scope))
  }
}
