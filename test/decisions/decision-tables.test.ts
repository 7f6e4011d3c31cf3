import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import {
  renderDecisionTablesCsv,
  renderDecisionTablesJson,
  renderDecisionTablesMarkdown,
} from '../../cli/decision-tables-render.js'
import { buildDecisionTables } from '../../src/decisions/decision-tables.js'

const docs = join(import.meta.dirname, '..', '..', 'docs')
const tables = buildDecisionTables()

describe('generated decision tables', () => {
  test('docs/decision-tables.md is fresh (run `npm run tables` after changing the core)', () => {
    expect(readFileSync(join(docs, 'decision-tables.md'), 'utf8')).toBe(renderDecisionTablesMarkdown(tables))
  })

  test('docs/decision-tables.json is fresh', () => {
    expect(readFileSync(join(docs, 'decision-tables.json'), 'utf8')).toBe(renderDecisionTablesJson(tables))
  })

  test('enumerates every family scope × public level × user level × operation', () => {
    // datasets 5 scopes × 4 × 5 × 10 ops; workflows 3 × 2 × 3 × 3; organizations 3 × 2 × 2
    expect(tables.decisions).toHaveLength(1000 + 54 + 12)
  })

  test('answers the question "what does data.metadata get on a hidden dataset it may read?"', () => {
    const row = tables.decisions.find(
      (r) =>
        r.scope === 'data.metadata' &&
        r.publicLevel === 'none' &&
        r.userLevel === 'data' &&
        r.operation === 'table.read',
    )
    expect(row).toEqual({
      resource: 'dataset',
      scope: 'data.metadata',
      publicLevel: 'none',
      userLevel: 'data',
      operation: 'table.read',
      status: 403,
      code: 'insufficient_scope',
      requiredScope: 'data.data',
    })
  })

  test('export examples: metadata is never restricted, N passes and N+1 does not', () => {
    const outcome = (restriction: string, request: string) =>
      tables.exports.find((r) => r.restriction === restriction && r.request === request)?.code
    expect(outcome('{"maxRecords":1000}', '1000 records')).toBe('allow')
    expect(outcome('{"maxRecords":1000}', '1001 records')).toBe('export_restricted')
    expect(tables.exports.find((r) => r.operation === 'dataset.metadata')?.code).toBe('allow')
  })

  test('CSV has a header and one line per decision', () => {
    const lines = renderDecisionTablesCsv(tables).trimEnd().split('\r\n')
    expect(lines[0]).toBe('resource,scope,public_level,user_level,operation,status,code,required_scope')
    expect(lines).toHaveLength(tables.decisions.length + 1)
  })
})
