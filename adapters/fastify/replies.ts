import { Readable } from 'node:stream'
import type { FastifyInstance, FastifyReply } from 'fastify'
import { createExportMeter } from '../../src/decisions/export-meter.js'
import type { AccessPolicy, Deny } from '../../src/index.js'
import {
  type DataChunk,
  type DataResponse,
  DEFAULT_STREAM_TYPE,
  prepareData,
  requireAllow,
  type StreamInit,
} from '../shared/data-response.js'
import { meterChunks } from '../shared/metered-chunks.js'

/**
 * Decorates the instance's replies with the response helpers of the plugin: `sendDenial` (the
 * policy's rendering), `sendData` (a complete body within the route's caps) and `streamData` (a
 * body through the export meter), each against the route's allow in `request.accessDecision`.
 *
 * @example
 * decorateReplies(fastify, policy)
 */
export function decorateReplies(fastify: FastifyInstance, policy: AccessPolicy): void {
  fastify.decorateReply('sendDenial', function sendDenial(this: FastifyReply, decision: Deny) {
    const rendered = policy.render(decision)
    return this.code(rendered.status).headers(rendered.headers).send(rendered.body)
  })

  fastify.decorateReply('sendData', function sendData(this: FastifyReply, data: DataResponse) {
    const prepared = prepareData(policy, this.request.accessDecision, data)
    if (!prepared.ok) return this.sendDenial(prepared.decision)
    return this.code(prepared.status).header('content-type', prepared.contentType).send(prepared.bytes)
  })

  fastify.decorateReply('streamData', streamData)
}

function streamData(
  this: FastifyReply,
  chunks: AsyncIterable<DataChunk> | Iterable<DataChunk>,
  init: StreamInit = {},
): FastifyReply {
  const meter = createExportMeter(requireAllow(this.request.accessDecision, 'reply.streamData'))
  const { raw, log } = this
  async function* metered(): AsyncGenerator<Uint8Array> {
    try {
      yield* meterChunks(chunks, meter)
    } catch (error) {
      // Destroying the socket here, rather than erroring the stream, breaks the transfer the same
      // way whether or not Fastify has flushed the headers yet.
      log.warn({ err: error }, 'data stream aborted')
      raw.destroy()
    }
  }
  return this.code(init.status ?? 200)
    .header('content-type', init.contentType ?? DEFAULT_STREAM_TYPE)
    .send(Readable.from(metered(), { objectMode: false }))
}
