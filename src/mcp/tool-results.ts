import type { Decision, Deny } from '../decisions/decision.js'
import { deny } from '../decisions/decision.js'
import { InvalidArgumentError } from '../errors.js'
import { type AccessPolicy, policyHooks } from '../policy.js'

/**
 * What a tool's handler answers once the policy allowed: the value sent as JSON text, and for data
 * content (table rows) how many records it carries; `undefined` when the thing asked for does not
 * exist (a table of an allowed dataset), answered like a resource that does not exist.
 */
export type McpAnswer = { readonly value: unknown; readonly records?: number } | undefined

/** One text block of a tool result. */
export interface McpTextContent {
  type: 'text'
  text: string
}

/** A tool result in the shape of the MCP SDK's `CallToolResult`: JSON text, or an error. */
export interface McpToolResult {
  [key: string]: unknown
  content: McpTextContent[]
  isError?: boolean
}

/**
 * The tool error for a denial: its public message and nothing else, so that a resource the caller
 * may not see reads exactly like one that does not exist (`Not found`), and a visible one the
 * scopes, levels or export restrictions deny reads `Not authorized`.
 *
 * @example
 * toolDenial(deny('not_found')) // { content: [{ type: 'text', text: 'Not found' }], isError: true }
 */
export function toolDenial(decision: Deny): McpToolResult {
  return { content: [{ type: 'text', text: decision.message }], isError: true }
}

function jsonText(value: unknown): McpToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(value) ?? 'null' }] }
}

const NOT_FOUND = deny('not_found')
const UNAVAILABLE = deny('service_unavailable')
const encoder = new TextEncoder()

function recordsOf(answer: NonNullable<McpAnswer>): number {
  const records = answer.records
  if (typeof records === 'number' && Number.isSafeInteger(records) && records >= 0) return records
  throw new InvalidArgumentError(
    `a data-content tool answer must say how many records it carries (records: a non-negative integer); got ${String(records)}`,
  )
}

/**
 * Turns a decision and the handler's answer into a tool result. A denial is {@link toolDenial}; an
 * allow runs `answer` and sends its JSON, checked first against the export caps of the allow when
 * the operation carries data content (the same byte and record limits as the REST route, measured
 * on the text the tool returns). A handler that throws, or a data answer that does not count its
 * records, is `Service unavailable`, reported to the policy's `onError`: never an allow.
 *
 * @example
 * await toolResult(policy, decision, () => ({ value: { rows }, records: rows.length }))
 */
export async function toolResult(
  policy: AccessPolicy,
  decision: Decision,
  answer: () => McpAnswer | Promise<McpAnswer>,
): Promise<McpToolResult> {
  if (!decision.allowed) return toolDenial(decision)
  try {
    const answered = await answer()
    if (answered === undefined) return toolDenial(NOT_FOUND)
    const text = jsonText(answered.value)
    if (!decision.dataContent) return text
    const size = { records: recordsOf(answered), bytes: encoder.encode(text.content[0]!.text).byteLength }
    const verdict = policy.checkResponseSize(decision, size)
    return verdict.allowed ? text : toolDenial(verdict)
  } catch (error) {
    policyHooks(policy).error(error, 'adapter')
    return toolDenial(UNAVAILABLE)
  }
}
