import { validate } from '@readme/openapi-parser'
import { expect } from 'vitest'
import { buildDecisionTables } from '../../src/decisions/decision-tables.js'
import type { Operation } from '../../src/decisions/operations.js'
import type { Scope } from '../../src/decisions/scopes.js'

/** Validates an OpenAPI document with @readme/openapi-parser and fails the test with its errors. */
export async function expectValidDocument(document: unknown): Promise<void> {
  // The parser dereferences in place: give it a copy.
  const result = await validate(structuredClone(document) as never)
  expect(result.valid ? [] : result.errors.map((error) => error.message)).toEqual([])
}

const TOP_LEVEL = new Set(['edit', 'write', 'admin'])

/**
 * The minimal scope of each operation as the decision tables say it: the narrowest scope of its
 * family that the core allows on a resource hidden from the public that the user fully controls.
 * The tables list each family's scopes narrowest first.
 */
export function minimalScopesFromTables(): ReadonlyMap<Operation, Scope> {
  const found = new Map<Operation, Scope>()
  for (const row of buildDecisionTables().decisions) {
    const hidden = row.publicLevel === 'none' || row.publicLevel === '-'
    if (!hidden || !TOP_LEVEL.has(row.userLevel) || row.status !== 200) continue
    if (!found.has(row.operation)) found.set(row.operation, row.scope)
  }
  return found
}
