import { describe, expect, test } from 'vitest'
import type { Allow } from '../../src/decisions/decision.js'
import { createExportMeter } from '../../src/decisions/export-meter.js'

const capped: Allow = {
  allowed: true,
  operation: 'table.read',
  dataContent: true,
  limits: { maxBytes: 10, maxRecords: 3 },
}

describe('createExportMeter', () => {
  test('counts chunks up to the caps and refuses the one past them', () => {
    const meter = createExportMeter(capped)
    expect(meter.count(4, 1)).toBe(true)
    expect(meter.count(6, 2)).toBe(true)
    expect(meter.count(1)).toBe(false)
    expect(meter.count(0)).toBe(false)
  })

  test('records past the cap abort too', () => {
    const meter = createExportMeter(capped)
    expect(meter.count(1, 4)).toBe(false)
  })

  test('each response starts from zero (per export, not cumulative)', () => {
    expect(createExportMeter(capped).count(10, 3)).toBe(true)
    expect(createExportMeter(capped).count(10, 3)).toBe(true)
  })

  test('declare checks the whole size before the first byte', () => {
    const meter = createExportMeter(capped)
    expect(meter.declare({ records: 3, bytes: 10 }).allowed).toBe(true)
    expect(meter.declare({ records: 4 })).toMatchObject({
      allowed: false,
      status: 403,
      code: 'export_restricted',
    })
  })

  test.each([
    [-5, 0],
    [1, -1],
    [1.5, 0],
    [Number.NaN, 0],
  ])('a chunk of %d bytes and %d records is a breach, never a credit', (chunkBytes, chunkRecords) => {
    const meter = createExportMeter(capped)
    expect(meter.count(chunkBytes, chunkRecords)).toBe(false)
    expect(meter.count(0)).toBe(false)
  })

  test('an allow without limits never aborts', () => {
    const meter = createExportMeter({ allowed: true, dataContent: true })
    expect(meter.count(1e12, 1e9)).toBe(true)
  })
})
