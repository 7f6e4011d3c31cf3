/**
 * Compiled IP allow-lists: rules become sorted, disjoint address ranges per family, packed into
 * typed arrays, so a lookup is a binary search (O(log ranges)) whatever the number of rules.
 */
import { ConfigError, type ConfigPath } from '../errors.js'
import {
  type AddressRule,
  familyBits,
  formatRule,
  type Ipv6Words,
  parseAddressRule,
  parseClientAddress,
  quoteValue,
} from './ip-address.js'

/** An inclusive range of addresses of one family, as integers. */
type Range = readonly [start: bigint, end: bigint]

/** One invalid rule: its index in the list and what is wrong with it. */
export interface AllowListIssue {
  readonly index: number
  readonly detail: string
}

/** The outcome of compiling a list of rules: the list, or every invalid rule. */
export type AllowListResult =
  | { readonly ok: true; readonly allowList: AllowList }
  | { readonly ok: false; readonly issues: readonly AllowListIssue[] }

/**
 * A compiled, immutable allow-list of IPv4 and IPv6 networks. Create it with `compileAllowList`.
 *
 * @example
 * compileAllowList(['10.0.0.0/8']).allows('::ffff:10.1.2.3') // true
 */
export class AllowList {
  /** The rules as given to `compileAllowList`; for an intersection, the fewest CIDRs covering it exactly. */
  readonly rules: readonly string[]
  readonly #ranges4: readonly Range[]
  readonly #ranges6: readonly Range[]
  readonly #starts4: Uint32Array
  readonly #ends4: Uint32Array
  // Per range, eight words: the start's four then the end's four, most significant first.
  readonly #bounds6: Uint32Array

  /** Builds a list from rule text and ranges of any order and overlap; prefer `compileAllowList`. */
  constructor(rules: readonly string[], ranges4: readonly Range[], ranges6: readonly Range[]) {
    this.rules = Object.freeze([...rules])
    this.#ranges4 = mergeRanges(ranges4)
    this.#ranges6 = mergeRanges(ranges6)
    this.#starts4 = Uint32Array.from(this.#ranges4, ([start]) => Number(start))
    this.#ends4 = Uint32Array.from(this.#ranges4, ([, end]) => Number(end))
    this.#bounds6 = new Uint32Array(this.#ranges6.length * 8)
    this.#ranges6.forEach(([start, end], i) => {
      for (let word = 0; word < 4; word++) {
        const shift = BigInt(96 - 32 * word)
        this.#bounds6[i * 8 + word] = Number((start >> shift) & 0xffff_ffffn)
        this.#bounds6[i * 8 + 4 + word] = Number((end >> shift) & 0xffff_ffffn)
      }
    })
    Object.freeze(this)
  }

  /**
   * Whether the client address is in the list. Unparsable or missing addresses are never allowed.
   *
   * @example
   * compileAllowList(['2001:db8::/32']).allows('2001:db8::1%eth0') // true
   */
  allows(address: string | undefined): boolean {
    const parsed = parseClientAddress(address)
    if (parsed === undefined) return false
    return parsed.family === 4 ? this.#allows4(parsed.value) : this.#allows6(parsed.words)
  }

  /** The intersection of two lists: the addresses both allow. Runs in O(ranges of a + ranges of b). */
  static intersect(a: AllowList, b: AllowList): AllowList {
    const ranges4 = intersectRanges(a.#ranges4, b.#ranges4)
    const ranges6 = intersectRanges(a.#ranges6, b.#ranges6)
    const rules = [...rangesToRules(4, ranges4), ...rangesToRules(6, ranges6)].map(formatRule)
    return new AllowList(rules, ranges4, ranges6)
  }

  #allows4(value: number): boolean {
    const starts = this.#starts4
    // Binary search for how many ranges start at or before the value: only the last can hold it.
    let low = 0
    let high = starts.length
    while (low < high) {
      const middle = (low + high) >>> 1
      if (starts[middle]! <= value) low = middle + 1
      else high = middle
    }
    // Stryker disable next-line ConditionalExpression: equivalent because index -1 of a typed array reads undefined, which no value is at or below
    if (low === 0) return false
    return value <= this.#ends4[low - 1]!
  }

  #allows6(words: Ipv6Words): boolean {
    const bounds = this.#bounds6
    // As in #allows4, over the starts (the first four words of each eight).
    let low = 0
    let high = this.#ranges6.length
    while (low < high) {
      const middle = (low + high) >>> 1
      if (compareWords(bounds, middle * 8, words) <= 0) low = middle + 1
      else high = middle
    }
    // Stryker disable next-line ConditionalExpression: equivalent because the words before index 0 read undefined, and comparing with them gives NaN, not >= 0
    if (low === 0) return false
    return compareWords(bounds, (low - 1) * 8 + 4, words) >= 0
  }
}

/**
 * Compiles allow-list rules once, at load time; throws a ConfigError naming the first bad rule.
 *
 * @example
 * const list = compileAllowList(['10.0.0.0/8', '2001:db8::/32'])
 * list.allows('10.1.2.3') // true
 * compileAllowList(['10.1.2.77/24'])
 * // throws `allowedIps[0]: "10.1.2.77/24" has host bits set; did you mean 10.1.2.0/24?`
 */
export function compileAllowList(rules: readonly string[], path: ConfigPath = ['allowedIps']): AllowList {
  const result = tryCompileAllowList(rules)
  if (result.ok) return result.allowList
  const [first] = result.issues
  throw new ConfigError([...path, first!.index], first!.detail)
}

/**
 * Compiles allow-list rules, reporting every bad rule instead of throwing.
 *
 * @example
 * tryCompileAllowList(['10.1', '::/0'])
 * // { ok: false, issues: [{ index: 0, detail: '"10.1" is not a valid IPv4 address or CIDR; …' }] }
 */
export function tryCompileAllowList(rules: readonly unknown[]): AllowListResult {
  const issues: AllowListIssue[] = []
  const ranges: Range[][] = [[], []]
  // An index loop, not forEach: holes in a sparse array are bad rules, not skipped ones.
  for (let index = 0; index < rules.length; index++) {
    const text = rules[index]
    if (typeof text !== 'string') {
      issues.push({
        index,
        detail: `${quoteValue(text)} is not a string; expected an IP address or CIDR such as "10.0.0.0/8"`,
      })
      continue
    }
    const parsed = parseAddressRule(text)
    if (!parsed.ok) issues.push({ index, detail: parsed.detail })
    else ranges[parsed.rule.family === 4 ? 0 : 1]!.push(ruleToRange(parsed.rule))
  }
  if (issues.length > 0) return { ok: false, issues }
  return { ok: true, allowList: new AllowList(rules as readonly string[], ranges[0]!, ranges[1]!) }
}

/**
 * The addresses allowed by both lists, as a new list whose rules are the fewest covering CIDRs.
 *
 * @example
 * const lan = compileAllowList(['10.0.0.0/8'])
 * intersectAllowLists(lan, compileAllowList(['10.1.0.0/16', '192.168.0.0/16'])).rules // ['10.1.0.0/16']
 */
export function intersectAllowLists(a: AllowList, b: AllowList): AllowList {
  return AllowList.intersect(a, b)
}

function ruleToRange(rule: AddressRule): Range {
  const size = 1n << BigInt(familyBits(rule.family) - rule.prefix)
  return [rule.network, rule.network + size - 1n]
}

function mergeRanges(ranges: readonly Range[]): Range[] {
  // The sign of the difference is exact even where Number() rounds it.
  const sorted = [...ranges].sort((x, y) => Number(x[0] - y[0]))
  const merged: Range[] = []
  for (const range of sorted) {
    const last = merged.at(-1)
    // Adjacent ranges merge too, so one binary search step decides a boundary address.
    if (last !== undefined && range[0] <= last[1] + 1n) {
      // Stryker disable next-line EqualityOperator: equivalent because on equal ends the replacement is the same range
      if (range[1] > last[1]) merged[merged.length - 1] = [last[0], range[1]]
    } else {
      merged.push(range)
    }
  }
  return merged
}

function intersectRanges(a: readonly Range[], b: readonly Range[]): Range[] {
  const out: Range[] = []
  let i = 0
  let j = 0
  while (i < a.length && j < b.length) {
    const [aStart, aEnd] = a[i]!
    const [bStart, bEnd] = b[j]!
    // Stryker disable next-line EqualityOperator: equivalent because on a tie both are the same value
    // biome-ignore lint/complexity/useMathMinMax: Math.max throws on bigints
    const start = aStart > bStart ? aStart : bStart
    // Stryker disable next-line EqualityOperator: equivalent because on a tie both are the same value
    // biome-ignore lint/complexity/useMathMinMax: Math.min throws on bigints
    const end = aEnd < bEnd ? aEnd : bEnd
    // Stryker disable next-line ConditionalExpression: equivalent because an empty range (start > end) makes no rule and merging absorbs or never finds it
    if (start <= end) out.push([start, end])
    // Stryker disable next-line EqualityOperator: equivalent because on equal ends the range kept meets nothing before the next step moves past it too
    if (aEnd < bEnd) i++
    else j++
  }
  return out
}

/** Splits ranges into the fewest aligned CIDR blocks, so an intersection can be shown as rules. */
function rangesToRules(family: 4 | 6, ranges: readonly Range[]): AddressRule[] {
  const bits = familyBits(family)
  const rules: AddressRule[] = []
  for (const [first, last] of ranges) {
    let start = first
    while (start <= last) {
      let hostBits = 0
      // The block must fit before last, which also keeps it within the family's bits.
      while (((start >> BigInt(hostBits)) & 1n) === 0n && start + (1n << BigInt(hostBits + 1)) - 1n <= last) {
        hostBits++
      }
      rules.push({ family, network: start, prefix: bits - hostBits })
      start += 1n << BigInt(hostBits)
    }
  }
  return rules
}

/** The sign of (the four words at `offset`) − `words`, compared as one 128-bit number. */
function compareWords(bounds: Uint32Array, offset: number, words: Ipv6Words): number {
  for (let k = 0; k < 4; k++) {
    const difference = bounds[offset + k]! - words[k]!
    if (difference !== 0) return difference
  }
  return 0
}
