import type { ExportMeter } from '../../src/decisions/export-meter.js'
import { type DataChunk, encodeBody } from './data-response.js'

/**
 * Thrown into a metered stream when a chunk would pass an export cap: the transfer must break.
 *
 * @example
 * try { for await (const bytes of meterChunks(rows, meter)) write(bytes) }
 * catch (error) { if (error instanceof ExportCapExceededError) socket.destroy() }
 */
export class ExportCapExceededError extends Error {
  constructor() {
    // The message names no limit: it may reach a log that the caller of the API can read.
    super('export restriction exceeded while streaming; the response was aborted')
    this.name = 'ExportCapExceededError'
  }
}

/**
 * Encodes and counts each chunk before it is yielded; a chunk that would pass a cap is never
 * yielded: the generator throws {@link ExportCapExceededError} instead, and the caller breaks the
 * connection so that the client sees an incomplete transfer, never a short but complete-looking one.
 *
 * @example
 * for await (const bytes of meterChunks(rows, createExportMeter(allow))) res.write(bytes)
 */
export async function* meterChunks(
  chunks: AsyncIterable<DataChunk> | Iterable<DataChunk>,
  meter: ExportMeter,
): AsyncGenerator<Uint8Array, void, undefined> {
  for await (const chunk of chunks) {
    const bytes = encodeBody(chunk.data)
    if (!meter.count(bytes.byteLength, chunk.records)) throw new ExportCapExceededError()
    yield bytes
  }
}
