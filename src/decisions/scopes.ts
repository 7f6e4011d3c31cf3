import { ScopeError } from '../errors.js'

/**
 * The nine scope names of the contract, in the contract's table order.
 * `wokflow.read` is spelled that way in the contract and is an exact identifier.
 */
export const SCOPES = [
  'public',
  'data.overview',
  'data.metadata',
  'data.data',
  'data.edit',
  'wokflow.read',
  'workflow.write',
  'organization.read',
  'organization.write',
] as const

/** One of the contract's nine scope names. */
export type Scope = (typeof SCOPES)[number]

const SCOPE_BITS = new Map<string, number>()
// Filled in place, not built from pairs: a broken pair list would fail the module's load, which
// the mutation runner counts as a survivor rather than a failing test.
for (const [index, scope] of SCOPES.entries()) {
  SCOPE_BITS.set(scope, 1 << index)
}

function bit(scope: Scope): number {
  return SCOPE_BITS.get(scope)!
}

// Within a family a wider scope grants everything the narrower ones do (platform endpoints accept
// "one of data.data, data.edit"); nothing implies across families. Frozen, lists and record alike:
// `impliedScopes` hands these very arrays out, and a caller's push must not grant anyone anything.
const IMPLIES: Readonly<Record<Scope, readonly Scope[]>> = Object.freeze({
  public: Object.freeze([]),
  'data.overview': Object.freeze([]),
  'data.metadata': Object.freeze(['data.overview']),
  'data.data': Object.freeze(['data.metadata', 'data.overview']),
  'data.edit': Object.freeze(['data.data', 'data.metadata', 'data.overview']),
  'wokflow.read': Object.freeze([]),
  'workflow.write': Object.freeze(['wokflow.read']),
  'organization.read': Object.freeze([]),
  'organization.write': Object.freeze(['organization.read']),
} satisfies Record<Scope, readonly Scope[]>)

// Each family's scopes, ranked like the levels they grant (index 0 is the level `none`).
const DATASET_FAMILY: readonly Scope[] = ['data.overview', 'data.metadata', 'data.data', 'data.edit']
const WORKFLOW_FAMILY: readonly Scope[] = ['wokflow.read', 'workflow.write']
const ORGANIZATION_FAMILY: readonly Scope[] = ['organization.read', 'organization.write']

function ceiling(effectiveMask: number, family: readonly Scope[]): number {
  // Stryker disable next-line ArithmeticOperator: equivalent because a start past the end reads no scope, whose bit is 0
  for (let i = family.length - 1; i >= 0; i--) {
    if ((effectiveMask & bit(family[i]!)) !== 0) return i + 1
  }
  return 0
}

const SUGGESTIONS: Readonly<Record<string, Scope>> = {
  'workflow.read': 'wokflow.read',
}

// Set in the class's static block: only the class body can test for its private fields.
let madeHere: (value: object) => boolean

/**
 * An immutable set of granted scopes. It always contains `public`; {@link ScopeSet.has} honours
 * implication within a family, {@link ScopeSet.granted} lists what was granted, in contract order.
 *
 * @example
 * const scopes = parseScopes('data.data wokflow.read')
 * scopes.has('data.metadata') // true: data.data implies it
 * String(scopes) // 'public data.data wokflow.read'
 */
export class ScopeSet {
  /** The granted scope names in contract order, `public` first, without implied ones. */
  readonly granted: readonly Scope[]
  /** @internal Rank of the highest dataset level the scopes reach (0 none … 4 edit). */
  readonly datasetCeiling: number
  /** @internal Rank of the highest workflow level the scopes reach (0 none, 1 read, 2 write). */
  readonly workflowCeiling: number
  /** @internal Rank of the highest organization scope (0 none, 1 read, 2 write). */
  readonly organizationCeiling: number
  readonly #grantedMask: number
  readonly #effectiveMask: number

  /** @internal Use {@link parseScopes} or {@link scopeSetOf}. */
  private constructor(grantedMask: number) {
    const mask = grantedMask | bit('public')
    let effective = mask
    const granted: Scope[] = []
    for (const scope of SCOPES) {
      if ((mask & bit(scope)) === 0) continue
      granted.push(scope)
      for (const implied of IMPLIES[scope]) effective |= bit(implied)
    }
    this.granted = Object.freeze(granted)
    this.#grantedMask = mask
    this.#effectiveMask = effective
    this.datasetCeiling = ceiling(effective, DATASET_FAMILY)
    this.workflowCeiling = ceiling(effective, WORKFLOW_FAMILY)
    this.organizationCeiling = ceiling(effective, ORGANIZATION_FAMILY)
    // Frozen: a ceiling changed after parsing would change what the set grants.
    Object.freeze(this)
  }

  /** @internal */
  static fromMask(mask: number): ScopeSet {
    return new ScopeSet(mask)
  }

  static {
    madeHere = (value) => #effectiveMask in value
  }

  /** True when the scope was granted or is implied by a granted one. */
  has(scope: Scope): boolean {
    return (this.#effectiveMask & (SCOPE_BITS.get(scope) ?? 0)) !== 0
  }

  /** True when both sets grant exactly the same scopes. */
  equals(other: ScopeSet): boolean {
    return this.#grantedMask === other.#grantedMask
  }

  /** The space-delimited OAuth form (RFC 6749 §3.3), in contract order. */
  toString(): string {
    return this.granted.join(' ')
  }

  /** The granted scopes as a JSON array. */
  toJSON(): readonly Scope[] {
    return this.granted
  }
}

/**
 * @internal True when `value` is a {@link ScopeSet} this module made: the brand is a private field,
 * so an object built on the class's prototype (`Object.create(ScopeSet.prototype, …)`), which
 * `instanceof` accepts with any ceilings it declares, is not one.
 */
export function isScopeSet(value: unknown): value is ScopeSet {
  return typeof value === 'object' && value !== null && madeHere(value)
}

/**
 * True when `value` is one of the nine scope names, spelled exactly.
 *
 * @example
 * isScope('wokflow.read') // true
 * isScope('workflow.read') // false
 */
export function isScope(value: unknown): value is Scope {
  // A Map answers any value: only the nine names are keys.
  return SCOPE_BITS.has(value as string)
}

function describeBadScope(entry: string): string {
  if (entry === '') return 'scope names must not be empty'
  const suggestion = SUGGESTIONS[entry]
  if (suggestion !== undefined) return `unknown scope "${entry}"; did you mean "${suggestion}"?`
  const lower = entry.toLowerCase()
  const cased = SCOPES.find((scope) => scope.toLowerCase() === lower)
  if (cased !== undefined) return `unknown scope "${entry}"; scope names are case-sensitive: "${cased}"`
  return `unknown scope ${JSON.stringify(entry)}; expected one of ${SCOPES.join(', ')}`
}

// RFC 6749 §3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E ), joined by single spaces.
const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]+$/

function maskOf(entry: unknown, index: number): number {
  if (typeof entry !== 'string') {
    throw new ScopeError(String(entry), `scopes[${index}] must be a string, got ${typeof entry}`)
  }
  const b = SCOPE_BITS.get(entry)
  if (b !== undefined) return b
  if (entry !== '' && !SCOPE_TOKEN.test(entry)) {
    throw new ScopeError(entry, `malformed scope ${JSON.stringify(entry)}: not an RFC 6749 scope-token`)
  }
  throw new ScopeError(entry, describeBadScope(entry))
}

/**
 * Parses a space-delimited OAuth scope string or an array of names into a {@link ScopeSet}.
 * Names are exact and case-sensitive; duplicates collapse; `public` is always added.
 *
 * @throws {ScopeError} naming the first unknown, empty or malformed entry.
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-3.3
 * @example
 * parseScopes('data.metadata').granted // ['public', 'data.metadata']
 * parseScopes(['workflow.read']) // throws: unknown scope "workflow.read"; did you mean "wokflow.read"?
 */
export function parseScopes(input: string | readonly unknown[]): ScopeSet {
  let entries: readonly unknown[]
  if (typeof input === 'string') {
    // Split on single spaces only: a tab, a double space or a stray edge space is an empty entry.
    entries = input === '' ? [] : input.split(' ')
  } else if (Array.isArray(input)) {
    entries = input
  } else {
    throw new ScopeError(String(input), 'scopes must be a space-delimited string or an array of scope names')
  }
  let mask = 0
  for (let i = 0; i < entries.length; i++) mask |= maskOf(entries[i], i)
  return ScopeSet.fromMask(mask)
}

/**
 * Builds a {@link ScopeSet} from scope names already typed as {@link Scope}.
 *
 * @example
 * scopeSetOf('data.metadata', 'wokflow.read').toString() // 'public data.metadata wokflow.read'
 */
export function scopeSetOf(...scopes: readonly Scope[]): ScopeSet {
  return parseScopes(scopes)
}

/**
 * Formats a scope set as the space-delimited OAuth scope string (RFC 6749 §3.3).
 *
 * @example
 * formatScopes(parseScopes(['data.data', 'data.data'])) // 'public data.data'
 */
export function formatScopes(scopes: ScopeSet): string {
  return scopes.toString()
}

/**
 * The scopes that `scope` implies within its family, itself excluded: a frozen list, shared.
 *
 * @example
 * impliedScopes('data.data') // ['data.metadata', 'data.overview']
 */
export function impliedScopes(scope: Scope): readonly Scope[] {
  return IMPLIES[scope]
}
