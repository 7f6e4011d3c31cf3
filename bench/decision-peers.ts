// The same rule — "may this principal read this dataset at level X?", i.e.
// max(public level, min(user level, scope ceiling)) >= X — encoded for the core and for each peer.
// test/bench-agreement.test.ts checks that every encoding gives the same answers on the mix.
import { createMongoAbility, type MongoAbility, subject } from '@casl/ability'
import * as cedar from '@cedar-policy/cedar-wasm/nodejs'
import { type Enforcer, newEnforcer, newModelFromString } from 'casbin'
import type { DecideInput } from '../src/decisions/decide.js'
import { DATASET_LEVELS, PUBLIC_DATASET_LEVELS } from '../src/decisions/levels.js'
import type { Operation } from '../src/decisions/operations.js'
import type { Scope } from '../src/decisions/scopes.js'
import type { DecisionLibrary } from './decision-mix.js'
import { shuffled } from './harness.js'

const CEILING_SCOPES: readonly Scope[][] = [
  [],
  ['data.overview'],
  ['data.metadata'],
  ['data.data'],
  ['data.edit'],
]
const OPERATION_FOR_LEVEL: readonly Operation[] = [
  'dataset.overview',
  'dataset.metadata',
  'table.read',
  'dataset.update',
]
const SCOPE_FOR_LEVEL: readonly Scope[] = ['data.overview', 'data.metadata', 'data.data', 'data.edit']

/** One request of the mix: principal ceiling (0–4), public level (0–3), user level (0–4), need (1–4). */
export interface MixRequest {
  readonly ceiling: number
  readonly publicLevel: number
  readonly userLevel: number
  readonly need: number
}

/** Every combination, shuffled deterministically: a rotating mix of allowed and denied requests. */
export function buildMix(): MixRequest[] {
  const mix: MixRequest[] = []
  for (let ceiling = 0; ceiling < 5; ceiling++)
    for (let publicLevel = 0; publicLevel < 4; publicLevel++)
      for (let userLevel = 0; userLevel < 5; userLevel++)
        for (let need = 1; need <= 4; need++) mix.push({ ceiling, publicLevel, userLevel, need })
  return shuffled(mix)
}

/** The rule itself, for reference. */
export function expected(request: MixRequest): boolean {
  return Math.max(request.publicLevel, Math.min(request.userLevel, request.ceiling)) >= request.need
}

/**
 * data-access-policy's `decide` (the built package in `npm run bench`), on inputs built once per
 * request as an adapter would.
 */
export function coreCandidate(
  mix: readonly MixRequest[],
  library: Pick<DecisionLibrary, 'decide' | 'parseScopes'>,
): (i: number) => boolean {
  const principals = CEILING_SCOPES.map((scopes) => ({
    kind: 'token' as const,
    userId: 'u',
    scopes: library.parseScopes(scopes),
  }))
  const inputs: DecideInput[] = mix.map((r) => ({
    principal: principals[r.ceiling]!,
    operation: OPERATION_FOR_LEVEL[r.need - 1]!,
    resource: {
      kind: 'dataset',
      publicLevel: PUBLIC_DATASET_LEVELS[r.publicLevel]!,
      userLevel: DATASET_LEVELS[r.userLevel]!,
    },
  }))
  const n = inputs.length
  const decide = library.decide
  return (i) => decide(inputs[i % n]!).allowed
}

/**
 * The rule in plain code on the peers' numeric levels: a `Set.has` and integer compares, reading
 * nothing a host would have to map first. The loop around the candidates, not a floor.
 */
export function baselineCandidate(mix: readonly MixRequest[]): (i: number) => boolean {
  const sets = CEILING_SCOPES.map((_, ceiling) => new Set(SCOPE_FOR_LEVEL.slice(0, ceiling)))
  const requests = mix.map((r) => ({
    scopes: sets[r.ceiling]!,
    publicLevel: r.publicLevel,
    userLevel: r.userLevel,
    need: r.need,
  }))
  const n = requests.length
  return (i) => {
    const r = requests[i % n]!
    return r.publicLevel >= r.need || (r.userLevel >= r.need && r.scopes.has(SCOPE_FOR_LEVEL[r.need - 1]!))
  }
}

/** CASL: one ability per principal, built once; datasets as subjects with numeric levels. */
export function caslCandidate(mix: readonly MixRequest[]): (i: number) => boolean {
  const abilities: MongoAbility[] = CEILING_SCOPES.map((_, ceiling) => {
    const rules = []
    for (let need = 1; need <= 4; need++) {
      const action = `read${need}`
      rules.push({ action, subject: 'Dataset', conditions: { publicLevel: { $gte: need } } })
      if (ceiling >= need)
        rules.push({ action, subject: 'Dataset', conditions: { userLevel: { $gte: need } } })
    }
    return createMongoAbility(rules)
  })
  const requests = mix.map((r) => ({
    ability: abilities[r.ceiling]!,
    action: `read${r.need}`,
    dataset: subject('Dataset', { publicLevel: r.publicLevel, userLevel: r.userLevel }),
  }))
  const n = requests.length
  return (i) => {
    const r = requests[i % n]!
    return r.ability.can(r.action, r.dataset)
  }
}

const CASBIN_MODEL = `
[request_definition]
r = sub, obj, act
[policy_definition]
p = sub, obj, act
[policy_effect]
e = some(where (p.eft == allow))
[matchers]
m = r.obj.publicLevel >= r.act || (r.obj.userLevel >= r.act && r.sub.ceiling >= r.act)
`

/** casbin: an in-memory ABAC model whose matcher encodes the rule. */
export async function casbinCandidate(mix: readonly MixRequest[]): Promise<(i: number) => boolean> {
  const enforcer: Enforcer = await newEnforcer(newModelFromString(CASBIN_MODEL))
  await enforcer.addPolicy('any', 'any', 'any')
  const requests = mix.map((r) => ({
    sub: { ceiling: r.ceiling },
    obj: { publicLevel: r.publicLevel, userLevel: r.userLevel },
    act: r.need,
  }))
  const n = requests.length
  return (i) => {
    const r = requests[i % n]!
    return enforcer.enforceSync(r.sub, r.obj, r.act)
  }
}

const CEDAR_POLICY = `permit(principal, action == Action::"read", resource)
when { resource.publicLevel >= context.need || (resource.userLevel >= context.need && principal.ceiling >= context.need) };`

/** Cedar (wasm): the policy set parsed once; entities and context per request. */
export function cedarCandidate(mix: readonly MixRequest[]): (i: number) => boolean {
  const parsed = cedar.preparsePolicySet('bench', { staticPolicies: CEDAR_POLICY })
  if (parsed.type !== 'success') throw new Error(`cedar policy does not parse: ${JSON.stringify(parsed)}`)
  const calls: cedar.StatefulAuthorizationCall[] = mix.map((r, index) => ({
    principal: { type: 'User', id: `p${r.ceiling}` },
    action: { type: 'Action', id: 'read' },
    resource: { type: 'Dataset', id: `d${index}` },
    context: { need: r.need },
    preparsedPolicySetId: 'bench',
    entities: [
      { uid: { type: 'User', id: `p${r.ceiling}` }, attrs: { ceiling: r.ceiling }, parents: [] },
      {
        uid: { type: 'Dataset', id: `d${index}` },
        attrs: { publicLevel: r.publicLevel, userLevel: r.userLevel },
        parents: [],
      },
    ],
  }))
  const n = calls.length
  return (i) => {
    const answer = cedar.statefulIsAuthorized(calls[i % n]!)
    return answer.type === 'success' && answer.response.decision === 'allow'
  }
}
