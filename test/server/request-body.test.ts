import { PassThrough, Readable } from 'node:stream'
import { describe, expect, test } from 'vitest'
import { bodyHasAccessToken } from '../../adapters/shared/access-token-parameter.js'
import { leakReportRoutes } from '../../examples/server/leaks/leak-reports.js'
import { MemoryReportReplayStore } from '../../examples/server/leaks/report-replays.js'
import type { SecretScanningKeys } from '../../examples/server/leaks/secret-scanning-keys.js'
import {
  BodyReadersBusyError,
  bodyLimits,
  bodyReader,
  MAX_CONCURRENT_LARGE_BODIES,
  parseBodyParameters,
  readRequestBody,
} from '../../examples/server/request/body.js'
import { type ApiRequest, MAX_BODY_BYTES, type RouteSet } from '../../examples/server/routes/route-set.js'
import { MemoryTokenStore } from '../../src/index.js'

// The parameters the bindings hand their framework as `req.body`: what the adapters check for an
// `access_token` (RFC 6750 §2.2), the same on Express, Fastify and Hono.
describe('parseBodyParameters', () => {
  const FORM = 'application/x-www-form-urlencoded'
  const JSON_TYPE = 'application/json'

  test.each([
    ['a form field', FORM, 'a=1&access_token=x', true],
    ['a JSON key', JSON_TYPE, '{"access_token":"x"}', true],
    ['a +json key', 'application/merge-patch+json', '{"access_token":"x"}', true],
    ['a text/plain body', 'text/plain', '{"access_token":"x"}', false],
    ['no content type', undefined, 'access_token=x', false],
    ['a JSON body that does not parse', JSON_TYPE, '{"access_token":', false],
    ['an empty body', JSON_TYPE, '', false],
  ])('%s', (_name, contentType, body, expected) => {
    expect(bodyHasAccessToken(parseBodyParameters(Buffer.from(body), contentType))).toBe(expected)
  })

  test.each([
    ['a form body', FORM, Buffer.concat([Buffer.from('access_token=x&a='), Buffer.from([0xff])])],
    [
      'a JSON body',
      JSON_TYPE,
      Buffer.concat([Buffer.from('{"access_token":"x","a":"'), Buffer.from([0xff, 0x22, 0x7d])]),
    ],
  ])('a byte that is not UTF-8 does not hide the parameter in %s', (_name, contentType, body) => {
    expect(bodyHasAccessToken(parseBodyParameters(body, contentType))).toBe(true)
  })
})

// The bindings' read of a body before routing (examples/server/request/body.ts).
describe('readRequestBody', () => {
  const JSON_TYPE = 'application/json'

  test('a body sent one byte at a time arrives whole, in one buffer', async () => {
    const text = `{"access_token":"x","pad":"${'y'.repeat(5000)}"}`
    const chunks = Array.from(Buffer.from(text), (byte) => Buffer.from([byte]))
    const { read, parameters } = await readRequestBody(Readable.from(chunks), JSON_TYPE, MAX_BODY_BYTES)
    expect(read).toEqual({ ok: true, bytes: Buffer.from(text) })
    expect(bodyHasAccessToken(parameters)).toBe(true)
  })

  test('past the cap: refused with the cap, whatever the chunks', async () => {
    const chunks = Array.from({ length: 11 }, () => Buffer.alloc(10, 0x61))
    expect((await readRequestBody(Readable.from(chunks), 'text/plain', 100)).read).toEqual({
      ok: false,
      limit: 100,
    })
  })

  test('a route with a cap of its own gets its bytes, not parsed parameters', async () => {
    const body = Buffer.from('{"access_token":"x"}')
    const { read, parameters } = await readRequestBody(Readable.from([body]), JSON_TYPE, 2 * MAX_BODY_BYTES)
    expect(read).toEqual({ ok: true, bytes: body })
    expect(parameters).toBeUndefined()
  })

  test(`past ${MAX_BODY_BYTES} bytes, at most ${MAX_CONCURRENT_LARGE_BODIES} reads go on at once; then a slot frees`, async () => {
    const limit = 4 * MAX_BODY_BYTES
    const large = Buffer.alloc(MAX_BODY_BYTES + 1, 0x61)
    // Senders that passed the default cap and have not finished.
    const senders = Array.from({ length: MAX_CONCURRENT_LARGE_BODIES }, () => new PassThrough())
    const reads = senders.map((sender) => readRequestBody(sender, 'text/plain', limit))
    for (const sender of senders) sender.write(large)
    await new Promise((resolve) => setImmediate(resolve))
    // Small bodies are never held up.
    const small = await readRequestBody(Readable.from([Buffer.from('a=1')]), 'text/plain', limit)
    expect(small.read.ok).toBe(true)
    // One more large body: no slot.
    const refused = await readRequestBody(Readable.from([large]), 'text/plain', limit)
    expect(refused.read).toEqual({ ok: false, busy: true })
    await expect(bodyReader(refused.read)()).rejects.toBeInstanceOf(BodyReadersBusyError)
    // A sender that finishes gives its slot back.
    senders[0]!.end()
    expect((await reads[0]!).read).toEqual({ ok: true, bytes: large })
    const next = await readRequestBody(Readable.from([large]), 'text/plain', limit)
    expect(next.read).toEqual({ ok: true, bytes: large })
    for (const sender of senders.slice(1)) sender.end()
    await Promise.all(reads)
  })

  test('a sender that goes away mid-body ends the read and gives its slot back', async () => {
    const limit = 4 * MAX_BODY_BYTES
    const large = Buffer.alloc(MAX_BODY_BYTES + 1, 0x61)
    for (let i = 0; i < MAX_CONCURRENT_LARGE_BODIES + 1; i++) {
      const sender = new PassThrough()
      const read = readRequestBody(sender, 'text/plain', limit)
      sender.write(large)
      await new Promise((resolve) => setImmediate(resolve))
      sender.destroy()
      await expect(read).rejects.toThrow('the request closed before its body ended')
    }
    // Every slot is free again.
    const next = await readRequestBody(Readable.from([large]), 'text/plain', limit)
    expect(next.read).toEqual({ ok: true, bytes: large })
  })

  test('a route with a cap of its own cannot be an API route (its parameters are not read)', () => {
    const handle = () => Promise.reject(new Error('not called'))
    const routes = [
      {
        method: 'POST' as const,
        path: '/a',
        handle,
        maxBodyBytes: 1,
        access: { operation: 'dataset.metadata' },
      },
    ]
    expect(() => bodyLimits([{ name: 'x', routes } as unknown as RouteSet])).toThrow(
      'POST /a: a route with its own body cap cannot be an API route',
    )
  })
})

describe('the leak-report route when every large-body slot is taken', () => {
  test('answers 503 with Retry-After, so the sender retries, and revokes nothing', async () => {
    const tokens = new MemoryTokenStore()
    const set = leakReportRoutes({
      tokens,
      keys: new Map() as unknown as SecretScanningKeys,
      replays: new MemoryReportReplayStore(),
      now: () => 0,
    })
    const answer = await set.routes[0]!.handle({
      body: bodyReader({ ok: false, busy: true }),
      headers: {},
    } as unknown as ApiRequest)
    expect(answer).toMatchObject({
      status: 503,
      headers: { 'retry-after': '5' },
      body: { error: { status: 503, code: 'service_unavailable' } },
    })
  })
})
