import { checkResponseSize } from './decide.js'
import type { Allow, Decision } from './decision.js'

/** Counts what a data-content response sends against its allow's limits. */
export interface ExportMeter {
  /** Declares the full size before the first byte; a denial means: send nothing, answer 403. */
  declare(size: { readonly records?: number; readonly bytes?: number }): Decision
  /**
   * Counts a chunk about to be written. False once a cap is exceeded: the caller must abort the
   * transfer (the client sees a broken response, never silently truncated data). Under a record
   * cap, a chunk that does not say how many records it carries (`records` undefined) is a breach.
   */
  count(bytes: number, records?: number): boolean
}

/**
 * Creates a meter for one response of an allowed data-content operation (docs/export-restrictions.md).
 * Per request, not cumulative: every response starts from zero.
 *
 * @example
 * const meter = createExportMeter(decision)
 * if (!meter.count(chunk.byteLength, 10)) socket.destroy()
 */
export function createExportMeter(decision: Allow): ExportMeter {
  const maxBytes = decision.limits?.maxBytes ?? Number.POSITIVE_INFINITY
  const maxRecords = decision.limits?.maxRecords ?? Number.POSITIVE_INFINITY
  let bytes = 0
  let records = 0
  let exceeded = false
  return {
    declare: (size) => checkResponseSize(decision, size),
    count(chunkBytes, chunkRecords) {
      if (exceeded) return false
      // Under a record cap a chunk must say how many records it carries: an uncounted one could
      // carry any number, so it breaks the transfer like an overrun (fail closed).
      if (chunkRecords === undefined) {
        if (maxRecords === Number.POSITIVE_INFINITY) chunkRecords = 0
        else {
          exceeded = true
          return false
        }
      }
      // A negative or fractional count would lower the running total: treat it as a breach.
      if (!isCount(chunkBytes) || !isCount(chunkRecords)) {
        exceeded = true
        return false
      }
      bytes += chunkBytes
      records += chunkRecords
      exceeded = !(bytes <= maxBytes && records <= maxRecords)
      return !exceeded
    },
  }
}

function isCount(value: number): boolean {
  return Number.isSafeInteger(value) && value >= 0
}
