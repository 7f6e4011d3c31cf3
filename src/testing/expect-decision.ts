import type { Decision, DenyCode } from '../decisions/decision.js'
import type { Scope } from '../decisions/scopes.js'

/** What a test expects of a decision: `'allow'`, or the denial's code (and optionally status, scope). */
export type ExpectedDecision =
  | 'allow'
  | DenyCode
  | { readonly code: DenyCode; readonly status?: number; readonly scope?: Scope }

function describe(decision: Decision): string {
  if (decision.allowed)
    return decision.limits === undefined ? 'allow' : `allow (limits ${JSON.stringify(decision.limits)})`
  const scope = decision.scope === undefined ? '' : `, scope ${decision.scope}`
  return `deny ${decision.status} ${decision.code}${scope}`
}

function mismatch(label: string, wanted: string, decision: Decision): never {
  throw new Error(`${label}: expected ${wanted}, got ${describe(decision)}`)
}

/**
 * Asserts a decision, throwing an `Error` with a readable message otherwise. Works with any test
 * runner (vitest, node:test, jest).
 *
 * @example
 * expectDecision(decide({ principal, operation: 'table.read', resource }), 'insufficient_scope')
 * expectDecision(decision, { code: 'insufficient_scope', scope: 'data.data' })
 */
export function expectDecision(decision: Decision, expected: ExpectedDecision, label = 'decision'): void {
  if (expected === 'allow') {
    if (!decision.allowed) mismatch(label, 'allow', decision)
    return
  }
  const want = typeof expected === 'string' ? { code: expected } : expected
  const status = want.status === undefined ? '' : `${want.status} `
  const scope = want.scope === undefined ? '' : `, scope ${want.scope}`
  const wanted = `deny ${status}${want.code}${scope}`
  if (decision.allowed) mismatch(label, wanted, decision)
  if (
    decision.code !== want.code ||
    (want.status !== undefined && decision.status !== want.status) ||
    (want.scope !== undefined && decision.scope !== want.scope)
  ) {
    mismatch(label, wanted, decision)
  }
}
