// What `scan` finds, the cap on how much it holds, and how it searches bytes of any kind (text,
// binary content, messages) for token values.
import {
  type FoundTokenValue,
  findTokenValues,
  TOKEN_VALUE_LENGTH,
  type TokenKind,
} from '../src/tokens/token-format.js'

/** One token value found, without the value. */
export interface ScanFinding {
  /**
   * The file, as given or relative to the scanned directory; in history, relative to the
   * repository. Absent for a value in a commit's or an annotated tag's message.
   */
  readonly file?: string
  /** 1-based line number, in the file or in the message. */
  readonly line: number
  /** The commit that added the line, or whose message holds the value, for a finding in git history. */
  readonly commit?: string
  /** The annotated tag whose message holds the value: its ref's name (`v1.2.0`). */
  readonly tag?: string
  readonly kind: TokenKind
  /** The prefix, `…` and the last four characters: enough to tell tokens apart, never to use one. */
  readonly hint: string
}

/**
 * A scan stops reading once it has found this many values, and a problem says so: 1 GiB of history
 * can hold tens of millions, more objects than the heap holds, and a list that long helps nobody.
 *
 * @example
 * if (findings.length === MAX_FINDINGS) console.error('there may be more')
 */
export const MAX_FINDINGS = 10_000

/**
 * The findings of one scan, up to {@link MAX_FINDINGS}.
 *
 * @example
 * const findings = new Findings()
 * findings.add({ file: '.env', line: 1, kind: 'api', hint: 'dap_…Cnw5' }) // true
 */
export class Findings {
  readonly list: ScanFinding[] = []
  /** A value past the cap was found: the scan stops reading. */
  full = false

  /** The number of findings that can still be added. */
  get room(): number {
    return MAX_FINDINGS - this.list.length
  }

  /** Adds a finding, or, past the cap, none: false then, and the caller stops reading. */
  add(finding: ScanFinding): boolean {
    if (this.room === 0) this.full = true
    else this.list.push(finding)
    return !this.full
  }
}

// A line of content is searched in windows of this many bytes, so that no line, however long (a
// binary file with no newline), is decoded whole.
const WINDOW_BYTES = 1024 * 1024

/**
 * The token values in one line of content, of any bytes. Token values are ASCII, so bytes are
 * decoded as latin1 (one character a byte: any bytes decode, and a UTF-8 sequence stays non-base62
 * as it should). Windows overlap by a value's length and a byte before, so a value across two is
 * found, in the window it starts in, with its real neighbours for the boundary check.
 *
 * @example
 * tokensInLine(Buffer.from('TOKEN=dap_0123456789ABCDEFGHIJKLMNOPQRSTUV2jCnw5\0')) // [{ index: 6, … }]
 */
export function tokensInLine(bytes: Buffer): FoundTokenValue[] {
  if (bytes.length <= WINDOW_BYTES) return findTokenValues(bytes.toString('latin1'))
  const found: FoundTokenValue[] = []
  for (let start = 0; start < bytes.length; start += WINDOW_BYTES) {
    const from = Math.max(0, start - 1)
    const text = bytes.subarray(from, start + WINDOW_BYTES + TOKEN_VALUE_LENGTH + 1).toString('latin1')
    for (const value of findTokenValues(text)) {
      const at = from + value.index
      if (at >= start && at < start + WINDOW_BYTES) found.push({ ...value, index: at })
    }
  }
  return found
}

/** The byte that ends a line, in files, in git's output and in messages. */
export const NEWLINE = '\n'.charCodeAt(0)

/**
 * Calls `visit` with each token value in `bytes` and its 1-based line, line by line, until it
 * returns false. Text and binary content alike (a NUL byte, bytes that are not UTF-8): a value in a
 * `.env` file that also holds a NUL is still a value.
 *
 * @example
 * forEachTokenValue(readFileSync('.env'), (line, { kind }) => findings.add({ file: '.env', line, kind, hint }))
 */
export function forEachTokenValue(
  bytes: Buffer,
  visit: (line: number, found: FoundTokenValue) => boolean,
): void {
  let line = 1
  for (let start = 0; start < bytes.length; line++) {
    const newline = bytes.indexOf(NEWLINE, start)
    const end = newline < 0 ? bytes.length : newline
    for (const found of tokensInLine(bytes.subarray(start, end))) if (!visit(line, found)) return
    start = end + 1
  }
}

/**
 * The findings of one repository's history, held until all of it is read: a merge's diff holds
 * every line the other parents brought, each added by a commit on their side and reported there,
 * so a merge's finding whose file and value a commit that is not a merge also added is left out.
 * Every value held counts towards the cap, before those repeats are left out: memory is bounded.
 *
 * @example
 * const history = new HistoryFindings(findings)
 * history.hold({ file: 'a.txt', line: 1, commit: '3f2c1a9e0b41', kind: 'api', hint }, `a.txt\0${value}`, false)
 * history.flush()
 */
export class HistoryFindings {
  private readonly held: { readonly finding: ScanFinding; readonly key?: string; readonly merge: boolean }[] =
    []
  // The file and value (a NUL between: no file name holds one) of each line a commit that is not a
  // merge added.
  private readonly added = new Set<string>()
  private readonly room: number

  constructor(private readonly findings: Findings) {
    this.room = findings.room
  }

  /** The cap is reached: reading stops. */
  get full(): boolean {
    return this.findings.full
  }

  /**
   * Holds a finding; `key` (file and value) for a line of a diff, `merge` when a merge's diff has it.
   * False, and nothing held, once the cap is reached.
   */
  hold(finding: ScanFinding, key?: string, merge = false): boolean {
    if (this.held.length === this.room) {
      this.findings.full = true
      return false
    }
    if (key !== undefined && !merge) this.added.add(key)
    this.held.push(key === undefined ? { finding, merge } : { finding, key, merge })
    return true
  }

  /** Adds what is held to the scan's findings, but a merge's repeats. */
  flush(): void {
    for (const { finding, key, merge } of this.held) {
      if (!merge || key === undefined || !this.added.has(key)) this.findings.add(finding)
    }
    this.held.length = 0
  }
}
