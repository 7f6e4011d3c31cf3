/**
 * Export restrictions of a dataset (docs/export-restrictions.md): caps on bytes and records per export and an
 * allow-list of client addresses. Validated and compiled once; checked per request without throwing.
 */
import { z } from 'zod'
import { ConfigError, type ConfigPath } from '../errors.js'
import { quoteValue } from './ip-address.js'
import { type AllowList, compileAllowList, intersectAllowLists, tryCompileAllowList } from './ip-matcher.js'

/** Export restrictions as written in configuration; an absent field sets no limit of that kind. */
export interface ExportRestrictionsInput {
  maxBytes?: number
  maxRecords?: number
  allowedIps?: readonly string[]
}

/** Compiled, immutable restrictions (create with compileExportRestrictions). */
export interface ExportRestrictions {
  readonly maxBytes?: number
  readonly maxRecords?: number
  readonly allowedIps?: readonly string[]
}

/** Which restriction an export breaks. */
export type ExportViolation = 'address' | 'records' | 'bytes'

/** A declared export size; an undeclared kind is left to the streaming meter. */
export interface ExportSize {
  records?: number
  bytes?: number
}

// The compiled state hides behind a module-private symbol: it cannot be forged, and it is invisible
// to JSON, spreading and deep equality, so compiled restrictions still look like data.
const compiledState = Symbol('data-access-policy.exportRestrictions')

// Both assigned by RestrictionState's static block, the only code that reaches its private slots.
/** @internal The value kept in `slot` of compiled restrictions' state, if any. */
export let derivedValue: (state: RestrictionState, slot: number) => unknown
/** @internal Keeps `value` in `slot` unless one is kept there already; answers the kept value. */
export let keepDerived: <T>(state: RestrictionState, slot: number, value: T) => T

/**
 * @internal What compiled restrictions carry besides their fields: frozen, and bound to the one
 * object it was made for (an object inheriting it, or a copy made from property descriptors, is
 * raw input to every check).
 */
export class RestrictionState {
  readonly owner: ExportRestrictions
  readonly allowList: AllowList | undefined
  /** A cap of 0: every export is blocked, even one that declares no size. */
  readonly blocksAll: boolean
  // Values a caller derives from these restrictions alone, made once and kept with them: `decide`
  // keeps its allows under the caps here, one slot per data-content operation, so that an allowed
  // export allocates nothing and needs no lookup keyed by the restrictions (a WeakMap costs more
  // than the rest of a capped decision, as `npm run bench` measured on the catalogue mix). Private,
  // written once, and read and written only through this module's functions: code that reaches
  // the state through its symbol can neither read nor plant a value.
  readonly #derived: unknown[] = []

  constructor(owner: ExportRestrictions, allowList: AllowList | undefined) {
    this.owner = owner
    this.allowList = allowList
    this.blocksAll = owner.maxBytes === 0 || owner.maxRecords === 0
    Object.freeze(this)
  }

  static {
    derivedValue = (state, slot) => state.#derived[slot]
    keepDerived = (state, slot, value) => {
      const kept = state.#derived[slot]
      if (kept !== undefined) return kept as typeof value
      state.#derived[slot] = value
      return value
    }
  }
}

interface Compiled extends ExportRestrictions {
  readonly [compiledState]: RestrictionState
}

interface Issue {
  readonly path: readonly (string | number)[]
  readonly detail: string
}

type ValidationResult =
  | { readonly ok: true; readonly value: Compiled }
  | { readonly ok: false; readonly issues: readonly Issue[] }

const CAPS = ['maxBytes', 'maxRecords'] as const
const KEYS: ReadonlySet<string> = new Set([...CAPS, 'allowedIps'])
const EXPECTED_CAP = `expected a whole number from 0 to ${Number.MAX_SAFE_INTEGER}`
const EXPECTED_LIST = 'expected an array of IP addresses and CIDRs, as in ["10.0.0.0/8", "::1"]'
// What invalid raw restrictions reaching a check become: nothing may be exported. Only its caps and
// its allow-list's answers are ever read. Built on that (already slow) path, not at load: a fault in
// it then fails the check that needs it, which a test sees, not the module's load, which the
// mutation runner would count as no failed test.
function denyAllRestrictions(): Compiled {
  // Compiled from no rules, as any list is: a list that allows no address.
  const allowList = compileAllowList([])
  return brand({ maxBytes: 0, maxRecords: 0, allowedIps: allowList.rules }, allowList)
}

/**
 * Validates and compiles export restrictions; embed it in a larger zod schema. Each issue's path
 * points at the bad field (`['allowedIps', 0]`) and its message says what was expected.
 *
 * @example
 * const seedDataset = z.object({ exportRestrictions: exportRestrictionsSchema.optional() })
 * seedDataset.parse({ exportRestrictions: { maxRecords: 1000, allowedIps: ['10.0.0.0/8'] } })
 */
export const exportRestrictionsSchema: z.ZodType<ExportRestrictions, ExportRestrictionsInput> = z
  .custom<ExportRestrictionsInput>()
  .transform((input, context) => {
    const result = validate(input)
    if (result.ok) return result.value
    for (const issue of result.issues) {
      context.addIssue({ code: 'custom', message: issue.detail, path: [...issue.path], input })
    }
    return z.NEVER
  })

/**
 * Validates and compiles export restrictions once, at load time.
 *
 * @throws ConfigError for the first invalid field, its path prefixed with `path`.
 * @example
 * const restrictions = compileExportRestrictions({ maxRecords: 1000, allowedIps: ['10.0.0.0/8'] })
 * compileExportRestrictions({ allowedIps: ['10.1.2.77/24'] }, ['datasets', 1, 'exportRestrictions'])
 * // throws `datasets[1].exportRestrictions.allowedIps[0]: "10.1.2.77/24" has host bits set; did you mean
 * // 10.1.2.0/24?`
 */
export function compileExportRestrictions(input: unknown, path: ConfigPath = []): ExportRestrictions {
  const result = validate(input)
  if (result.ok) return result.value
  const [first] = result.issues
  throw new ConfigError([...path, ...first!.path], first!.detail)
}

/**
 * Whether a value is compiled restrictions (from this module), as opposed to raw input.
 *
 * @example
 * isExportRestrictions(compileExportRestrictions({})) // true
 * isExportRestrictions({ maxRecords: 5 })              // false
 */
export function isExportRestrictions(value: unknown): value is ExportRestrictions {
  return typeof value === 'object' && value !== null && Object.hasOwn(value, compiledState)
}

/**
 * Combines the restrictions of the tables a derived table is built from: the smallest of each cap
 * and the intersection of the allow-lists (an absent list restricts nothing). Meant for load time:
 * intersecting lists costs O(total ranges).
 *
 * @throws ConfigError if an argument is raw input that is not valid restrictions.
 * @example
 * combineRestrictions(
 *   compileExportRestrictions({ maxRecords: 100, allowedIps: ['10.0.0.0/8'] }),
 *   compileExportRestrictions({ maxRecords: 50, allowedIps: ['10.1.0.0/16', '192.168.0.0/16'] }),
 * ) // { maxRecords: 50, allowedIps: ['10.1.0.0/16'] }
 */
export function combineRestrictions(...restrictions: readonly ExportRestrictions[]): ExportRestrictions {
  const compiled = restrictions.map((each) =>
    isCompiled(each) ? each : (compileExportRestrictions(each) as Compiled),
  )
  if (compiled.length === 1) return compiled[0]!
  const out: { -readonly [K in keyof ExportRestrictions]: ExportRestrictions[K] } = {}
  for (const cap of CAPS) {
    for (const each of compiled) {
      const limit = each[cap]
      const current = out[cap]
      // Stryker disable next-line EqualityOperator: equivalent because an equal limit replaces the same number
      if (limit !== undefined && (current === undefined || limit < current)) out[cap] = limit
    }
  }
  let allowList: AllowList | undefined
  for (const each of compiled) {
    const list = each[compiledState].allowList
    if (list !== undefined) {
      allowList = allowList === undefined || allowList === list ? list : intersectAllowLists(allowList, list)
    }
  }
  if (allowList !== undefined) out.allowedIps = allowList.rules
  return brand(out, allowList)
}

/**
 * Whether the client address may receive data content. True when there is no allow-list; false
 * for a missing or unparsable address (`10.1.2.3:8080`, `[::1]`, `''`). Never throws.
 *
 * @example
 * const restrictions = compileExportRestrictions({ allowedIps: ['10.0.0.0/8', '::/0'] })
 * checkClientAddress(restrictions, '::ffff:10.1.2.3') // true
 * checkClientAddress(restrictions, '192.168.1.1')     // false
 */
export function checkClientAddress(restrictions: ExportRestrictions, address: string | undefined): boolean {
  const list = compiledOf(restrictions)[compiledState].allowList
  return list === undefined || list.allows(address)
}

/**
 * Checks a declared export size against the caps, before anything is sent. A size above its cap
 * (N allowed, N+1 not) or not a non-negative integer violates. A cap of 0 blocks every export,
 * even a declared empty one (an empty result still answers the query). An undeclared kind is not
 * checked here: the streaming meter enforces it. Never throws.
 *
 * @example
 * const restrictions = compileExportRestrictions({ maxRecords: 1000 })
 * checkExportSize(restrictions, { records: 1000 }) // undefined
 * checkExportSize(restrictions, { records: 1001 }) // 'records'
 */
export function checkExportSize(
  restrictions: ExportRestrictions,
  size: ExportSize,
): ExportViolation | undefined {
  return sizeViolation(compiledOf(restrictions), size)
}

/**
 * @internal Whether a data-content request may go ahead under restrictions: the client address
 * against the allow-list, a declared size against the caps, as {@link checkClientAddress} and
 * {@link checkExportSize} answer them. Answers the restrictions' hidden state when it may, so that
 * the caller reads it once; undefined when it may not, and for raw input, refused outright (one
 * property read instead of {@link isExportRestrictions}'s `Object.hasOwn`: a gain on capped
 * decisions measured by `npm run bench`). Never throws on a plain object.
 */
export function permittedExport(
  restrictions: ExportRestrictions,
  facts: { readonly clientAddress?: string | undefined; readonly size?: ExportSize | undefined } | undefined,
): RestrictionState | undefined {
  const state =
    typeof restrictions === 'object' && restrictions !== null
      ? (restrictions as Partial<Compiled>)[compiledState]
      : undefined
  // Its own state only: an object inheriting compiled restrictions, or a copy of their property
  // descriptors, carries the state of another object and caps of its own.
  if (state === undefined || state.owner !== restrictions) return undefined
  const list = state.allowList
  if (list !== undefined && !list.allows(facts?.clientAddress)) return undefined
  // Without a declared size only a cap of 0 can refuse, which compilation already knows: the caps
  // are not read again while no size is declared (the common case before a handler has counted).
  const size = facts?.size
  if (size === undefined) return state.blocksAll ? undefined : state
  return sizeViolation(restrictions, size) === undefined ? state : undefined
}

/**
 * @internal The size rule of {@link checkExportSize} on bare caps; also checks the caps an allow
 * carries, so that a declared size means the same thing wherever it is checked.
 */
export function sizeViolation(
  caps: { readonly maxRecords?: number | undefined; readonly maxBytes?: number | undefined },
  size: ExportSize | undefined,
): ExportViolation | undefined {
  if (exceeds(caps.maxRecords, size?.records)) return 'records'
  if (exceeds(caps.maxBytes, size?.bytes)) return 'bytes'
  return undefined
}

function exceeds(cap: number | undefined, declared: number | undefined): boolean {
  if (cap === undefined) return false
  if (cap === 0) return true
  if (declared === undefined) return false
  return !(Number.isSafeInteger(declared) && declared >= 0 && declared <= cap)
}

// Stryker disable next-line BlockStatement: equivalent because `validate` also answers compiled restrictions as they are; this spares its result object
function isCompiled(value: ExportRestrictions): value is Compiled {
  return isExportRestrictions(value)
}

// Raw input reaching a check is compiled on the spot (slowly); if it is invalid, nothing may be
// exported, because a check must decide without throwing.
function compiledOf(restrictions: ExportRestrictions): Compiled {
  // Stryker disable next-line ConditionalExpression: equivalent because `validate` also answers compiled restrictions as they are; this spares its result object
  if (isCompiled(restrictions)) return restrictions
  const result = validate(restrictions)
  return result.ok ? result.value : denyAllRestrictions()
}

function validate(input: unknown): ValidationResult {
  if (isExportRestrictions(input)) return { ok: true, value: input as Compiled }
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    const detail = `${quoteValue(input)} is not an object; expected { maxBytes?, maxRecords?, allowedIps? }`
    return { ok: false, issues: [{ path: [], detail }] }
  }
  const issues: Issue[] = []
  const fields = input as Record<string, unknown>
  for (const key of Object.keys(fields)) {
    if (!KEYS.has(key)) {
      issues.push({
        path: [key],
        detail: `unknown key ${JSON.stringify(key)}; expected maxBytes, maxRecords or allowedIps`,
      })
    }
  }
  const out: { -readonly [K in keyof ExportRestrictions]: ExportRestrictions[K] } = {}
  for (const cap of CAPS) {
    const value = fields[cap]
    if (value === undefined) continue
    // Stryker disable next-line ConditionalExpression: equivalent because Number.isSafeInteger is false for anything but a number
    if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) {
      out[cap] = value === 0 ? 0 : value // -0 reads as 0 in messages and JSON alike
    } else {
      issues.push({ path: [cap], detail: `${quoteValue(value)} is not a valid cap; ${EXPECTED_CAP}` })
    }
  }
  let allowList: AllowList | undefined
  const rules = fields.allowedIps
  if (Array.isArray(rules)) {
    const compiled = tryCompileAllowList(rules)
    if (compiled.ok) {
      allowList = compiled.allowList
      out.allowedIps = allowList.rules
    } else {
      for (const { index, detail } of compiled.issues) issues.push({ path: ['allowedIps', index], detail })
    }
  } else if (rules !== undefined) {
    issues.push({ path: ['allowedIps'], detail: `${quoteValue(rules)} is not a list; ${EXPECTED_LIST}` })
  }
  return issues.length > 0 ? { ok: false, issues } : { ok: true, value: brand(out, allowList) }
}

function brand(fields: ExportRestrictions, allowList: AllowList | undefined): Compiled {
  const state = new RestrictionState(fields, allowList)
  Object.defineProperty(fields, compiledState, { value: state })
  return Object.freeze(fields) as Compiled
}
