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

type Schema = {
  type?: string | string[]
  enum?: unknown[]
  required?: string[]
  properties?: Record<string, Schema>
  additionalProperties?: boolean
  items?: Schema
  oneOf?: Schema[]
  minimum?: number
  maximum?: number
}

function typeOf(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'array'
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number'
  return typeof value
}

/**
 * What keeps `value` from matching `schema`, in the subset of JSON Schema the documents under test
 * use (type, enum, required, properties, additionalProperties, items, oneOf, minimum, maximum); an
 * empty list when it matches.
 */
export function schemaErrors(value: unknown, schema: Schema, at = '$'): string[] {
  if (schema.oneOf !== undefined) {
    const matching = schema.oneOf.filter((one) => schemaErrors(value, one, at).length === 0)
    return matching.length === 1 ? [] : [`${at}: matches ${matching.length} of oneOf`]
  }
  const errors: string[] = []
  const type = typeOf(value)
  if (schema.type !== undefined) {
    const types = Array.isArray(schema.type) ? schema.type : [schema.type]
    if (!types.includes(type) && !(type === 'integer' && types.includes('number'))) {
      return [`${at}: ${type}, expected ${types.join(' or ')}`]
    }
  }
  if (schema.enum !== undefined && !schema.enum.includes(value)) {
    errors.push(`${at}: ${JSON.stringify(value)} not in ${JSON.stringify(schema.enum)}`)
  }
  if (typeof value === 'number') {
    if (schema.minimum !== undefined && value < schema.minimum) errors.push(`${at}: below ${schema.minimum}`)
    if (schema.maximum !== undefined && value > schema.maximum) errors.push(`${at}: above ${schema.maximum}`)
  }
  if (type === 'object') {
    const object = value as Record<string, unknown>
    for (const key of schema.required ?? []) {
      if (!Object.hasOwn(object, key)) errors.push(`${at}.${key}: missing`)
    }
    for (const [key, each] of Object.entries(object)) {
      const property = schema.properties?.[key]
      if (property !== undefined) errors.push(...schemaErrors(each, property, `${at}.${key}`))
      else if (schema.additionalProperties === false) errors.push(`${at}.${key}: not allowed`)
    }
  }
  if (type === 'array' && schema.items !== undefined) {
    ;(value as unknown[]).forEach((each, index) => {
      errors.push(...schemaErrors(each, schema.items!, `${at}[${index}]`))
    })
  }
  return errors
}
