// Commit and annotated tag messages, which GitHub's secret scanning reads too: a value pasted into
// one is as public as one committed in a file. Read as raw objects (`git cat-file --batch`), so a
// message is searched whole, whatever bytes it holds, and never passes through a format or an
// encoding the repository's config chooses.
import { tokenValueHint } from '../src/tokens/token-format.js'
import { forEachTokenValue, type HistoryFindings } from './scan-findings.js'
import { git, outputLines, readObjects, UNTRUSTED_REPOSITORY_OPTIONS } from './scan-git.js'

const BLANK_LINE = Buffer.from('\n\n')

/** The headers of a commit or tag object, and its message: what follows the first blank line. */
function partsOf(content: Buffer): { readonly headers: string[]; readonly message: Buffer } {
  const blank = content.indexOf(BLANK_LINE)
  if (blank < 0) return { headers: content.toString('utf8').split('\n'), message: Buffer.alloc(0) }
  return {
    headers: content.subarray(0, blank).toString('utf8').split('\n'),
    message: content.subarray(blank + BLANK_LINE.length),
  }
}

/** Holds each value in `message` as found in the commit or tag named; false once the cap is reached. */
function scanMessage(
  message: Buffer,
  where: { readonly commit: string } | { readonly tag: string },
  history: HistoryFindings,
): boolean {
  let room = true
  forEachTokenValue(message, (line, { value, kind }) => {
    room = history.hold({ ...where, line, kind, hint: tokenValueHint(value) })
    return room
  })
  return room
}

/**
 * Holds the values in the messages of `commits` (full ids) of the repository at `top`; a problem
 * (a commit git cannot read) is returned.
 */
export function scanCommitMessages(
  top: string,
  commits: readonly string[],
  history: HistoryFindings,
): string | undefined {
  const objects = readObjects(top, commits)
  if (typeof objects === 'string') return objects
  for (const { id, content } of objects) {
    if (!scanMessage(partsOf(content).message, { commit: id.slice(0, 12) }, history)) break
  }
  return undefined
}

/** `v1.0` for `refs/tags/v1.0`; a ref elsewhere that names a tag object keeps its full name. */
function tagName(ref: string): string {
  return ref.startsWith('refs/tags/') ? ref.slice('refs/tags/'.length) : ref
}

/**
 * The annotated tags the refs name: the tag objects' ids, each with its ref's name (the first, by
 * name, of the refs that name it). A lightweight tag names a commit, whose message is read with the
 * commits'.
 */
function listTags(top: string): Map<string, string> | string {
  const refs = git(top, [
    ...UNTRUSTED_REPOSITORY_OPTIONS,
    'for-each-ref',
    '--format=%(objecttype) %(objectname) %(refname)',
  ])
  if (!refs.ok) return refs.detail
  const tags = new Map<string, string>()
  for (const line of outputLines(refs.out)) {
    // A ref's name holds no space.
    const [type, id = '', ref = ''] = line.split(' ')
    if (type === 'tag' && !tags.has(id)) tags.set(id, tagName(ref))
  }
  return tags
}

/** The tag object a tag object names, when it names one (`git tag -a outer inner`). */
function taggedTag(headers: readonly string[]): string | undefined {
  if (!headers.includes('type tag')) return undefined
  return headers.find((header) => header.startsWith('object '))?.slice('object '.length)
}

/**
 * Holds the values in the message of every annotated tag of the repository at `top`, and of the
 * tags those tag, each under the name of the ref that leads to it. A problem is returned.
 */
export function scanTagMessages(top: string, history: HistoryFindings): string | undefined {
  let pending = listTags(top)
  if (typeof pending === 'string') return pending
  const read = new Set<string>()
  while (pending.size > 0) {
    const objects = readObjects(top, [...pending.keys()])
    if (typeof objects === 'string') return objects
    const next = new Map<string, string>()
    for (const { id, content } of objects) {
      read.add(id)
      const tag = pending.get(id) ?? id
      const { headers, message } = partsOf(content)
      if (!scanMessage(message, { tag }, history)) return undefined
      const inner = taggedTag(headers)
      if (inner !== undefined && !read.has(inner)) next.set(inner, tag)
    }
    pending = next
  }
  return undefined
}
