import { createServer, type IncomingHttpHeaders } from 'node:http'
import { connect, type Socket } from 'node:net'
import { PassThrough, Readable } from 'node:stream'
import { describe, expect, test, vi } from 'vitest'
import { bodyHasAccessToken } from '../../adapters/shared/access-token-parameter.js'
import { runRoute } from '../../examples/server/http/run-route.js'
import {
  LEAK_REPORT_PATH,
  leakReportRoutes,
  MAX_LEAK_REPORT_BYTES,
} from '../../examples/server/leaks/leak-reports.js'
import { MemoryReportReplayStore } from '../../examples/server/leaks/report-replays.js'
import type { SecretScanningKeys } from '../../examples/server/leaks/secret-scanning-keys.js'
import {
  BodyReadersBusyError,
  BodyReadTimeoutError,
  bodyLimits,
  bodyReader,
  type LargeBodyClaim,
  type LargeBodyPace,
  LengthRequiredError,
  MAX_CONCURRENT_LARGE_BODIES,
  parseBodyParameters,
  type ReadBody,
  readRequestBody,
} from '../../examples/server/request/body.js'
import { dueAt } from '../../examples/server/request/large-body.js'
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
  // A pace no test waits out: these slots are held until the test lets go.
  const PATIENT: LargeBodyPace = { graceMs: 60_000, bytesPerSecond: 1 }
  // A read that declares `declaredBytes` and may take a slot; `networks` empty: no per-network bound.
  const claimOf =
    (declaredBytes: number | undefined, networks: readonly string[] = []) =>
    (): LargeBodyClaim => ({ admitted: true, networks, declaredBytes })
  const large = Buffer.alloc(MAX_BODY_BYTES + 1, 0x61)
  const patient = (networks: readonly string[] = []) => ({
    claim: claimOf(large.length, networks),
    pace: PATIENT,
  })

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
    // Senders that passed the default cap and have not finished.
    const senders = Array.from({ length: MAX_CONCURRENT_LARGE_BODIES }, () => new PassThrough())
    const reads = senders.map((sender) => readRequestBody(sender, 'text/plain', limit, patient()))
    for (const sender of senders) sender.write(large)
    await new Promise((resolve) => setImmediate(resolve))
    // Small bodies are never held up.
    const small = await readRequestBody(Readable.from([Buffer.from('a=1')]), 'text/plain', limit)
    expect(small.read.ok).toBe(true)
    // One more large body: no slot.
    const refused = await readRequestBody(Readable.from([large]), 'text/plain', limit, patient())
    expect(refused.read).toEqual({ ok: false, busy: true })
    await expect(bodyReader(refused.read)()).rejects.toBeInstanceOf(BodyReadersBusyError)
    // A sender that finishes gives its slot back.
    senders[0]!.end()
    expect((await reads[0]!).read).toEqual({ ok: true, bytes: large })
    const next = await readRequestBody(Readable.from([large]), 'text/plain', limit, patient())
    expect(next.read).toEqual({ ok: true, bytes: large })
    for (const sender of senders.slice(1)) sender.end()
    await Promise.all(reads)
  })

  test('a sender that goes away mid-body ends the read and gives its slot back', async () => {
    const limit = 4 * MAX_BODY_BYTES
    for (let i = 0; i < MAX_CONCURRENT_LARGE_BODIES + 1; i++) {
      const sender = new PassThrough()
      const read = readRequestBody(sender, 'text/plain', limit, patient())
      sender.write(large)
      await new Promise((resolve) => setImmediate(resolve))
      sender.destroy()
      await expect(read).rejects.toThrow('the request closed before its body ended')
    }
    // Every slot is free again.
    const next = await readRequestBody(Readable.from([large]), 'text/plain', limit, patient())
    expect(next.read).toEqual({ ok: true, bytes: large })
  })

  test('a large body that falls behind its pace fails, gives its slot back and is destroyed', async () => {
    const limit = 4 * MAX_BODY_BYTES
    const pace: LargeBodyPace = { graceMs: 50, bytesPerSecond: 256 * 1024 }
    const declared = 3 * MAX_BODY_BYTES
    const due = Math.ceil(dueAt(0, declared, pace))
    for (let i = 0; i < MAX_CONCURRENT_LARGE_BODIES + 1; i++) {
      const sender = new PassThrough()
      const read = readRequestBody(sender, 'text/plain', limit, { claim: claimOf(declared), pace })
      sender.write(large)
      expect((await read).read).toEqual({ ok: false, deadlineMs: due })
      expect(sender.destroyed).toBe(true)
    }
    await expect(bodyReader({ ok: false, deadlineMs: 50 })()).rejects.toBeInstanceOf(BodyReadTimeoutError)
    // Every slot is free again.
    const next = await readRequestBody(Readable.from([large]), 'text/plain', limit, patient())
    expect(next.read).toEqual({ ok: true, bytes: large })
  })

  test('a sender that keeps its pace keeps its slot past the grace', async () => {
    // 16 KiB/s: each 64 KiB chunk buys 4 s more, far more than a busy machine delays a timer.
    const pace: LargeBodyPace = { graceMs: 20, bytesPerSecond: 16 * 1024 }
    const sender = new PassThrough()
    const chunk = Buffer.alloc(MAX_BODY_BYTES, 0x61)
    const declared = 4 * chunk.length
    const read = readRequestBody(sender, 'text/plain', declared, { claim: claimOf(declared), pace })
    for (let i = 0; i < 4; i++) {
      sender.write(chunk)
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    sender.end()
    expect((await read).read).toMatchObject({ ok: true })
  })

  test.each([
    ['without a claim', undefined],
    ['with a claim that declares no length (a chunked body)', claimOf(undefined)],
  ])('past the default cap %s: no slot, 411', async (_what, claim) => {
    const { read } = await readRequestBody(Readable.from([large]), 'text/plain', 4 * MAX_BODY_BYTES, {
      claim,
    })
    expect(read).toEqual({ ok: false, lengthRequired: true })
    await expect(bodyReader(read)()).rejects.toBeInstanceOf(LengthRequiredError)
  })

  test('a declared length past the cap is refused with the cap when the body passes the default', async () => {
    const { read } = await readRequestBody(Readable.from([large]), 'text/plain', 2 * MAX_BODY_BYTES, {
      claim: claimOf(2 * MAX_BODY_BYTES + 1),
    })
    expect(read).toEqual({ ok: false, limit: 2 * MAX_BODY_BYTES })
  })

  test('a network holds one slot: a read from any of its networks waits for it', async () => {
    const sender = new PassThrough()
    const held = readRequestBody(
      sender,
      'text/plain',
      4 * MAX_BODY_BYTES,
      patient(['2001:db8:1::/48', '2001:db8:1:1::/64']),
    )
    sender.write(large)
    await new Promise((resolve) => setImmediate(resolve))
    const sameSite = await readRequestBody(
      Readable.from([large]),
      'text/plain',
      4 * MAX_BODY_BYTES,
      patient(['2001:db8:1::/48', '2001:db8:1:2::/64']),
    )
    expect(sameSite.read).toEqual({ ok: false, busy: true })
    const otherSite = await readRequestBody(
      Readable.from([large]),
      'text/plain',
      4 * MAX_BODY_BYTES,
      patient(['2001:db8:2::/48', '2001:db8:2:1::/64']),
    )
    expect(otherSite.read).toEqual({ ok: true, bytes: large })
    sender.end()
    expect((await held).read).toEqual({ ok: true, bytes: large })
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

// The leak-report route on a real server on 127.0.0.1, read as the bindings read it but with a short
// deadline: senders that pass MAX_BODY_BYTES and stall (a slowloris on the slots) shut it only until
// their deadline, and each is answered 408 in the server's error shape if it is still there.
describe('the leak-report route when large bodies stall', () => {
  // A short grace, the default rate: each sender falls behind a quarter second after it.
  const PACE: LargeBodyPace = { graceMs: 200, bytesPerSecond: 256 * 1024 }
  const DEADLINE_MS = Math.ceil(dueAt(0, MAX_LEAK_REPORT_BYTES, PACE))

  test(`${MAX_CONCURRENT_LARGE_BODIES} stalled senders free their slots at the deadline`, async () => {
    const route = leakReportRoutes({
      tokens: new MemoryTokenStore(),
      keys: new Map() as unknown as SecretScanningKeys,
      replays: new MemoryReportReplayStore(),
      now: () => 0,
    }).routes[0]!
    const reads: ReadBody[] = []
    const server = createServer(async (req, res) => {
      const claim = (): LargeBodyClaim => ({
        admitted: true,
        networks: [],
        declaredBytes: Number(req.headers['content-length']),
      })
      const { read } = await readRequestBody(req, undefined, MAX_LEAK_REPORT_BYTES, { claim, pace: PACE })
      reads.push(read)
      const request = { body: bodyReader(read), headers: req.headers } as unknown as ApiRequest
      const result = await runRoute(route, request, () => {})
      if (result.kind !== 'json') throw new Error(`unexpected ${result.kind}`)
      res.writeHead(result.status, { 'content-type': 'application/json' }).end(JSON.stringify(result.body))
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const { port } = server.address() as { port: number }
    const head = (length: number) =>
      `POST ${LEAK_REPORT_PATH} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: ${length}\r\n\r\n`
    const sockets: Socket[] = []
    try {
      // Each sends past the default cap, announces a full report, and stalls.
      const answers = Array.from({ length: MAX_CONCURRENT_LARGE_BODIES }, () => {
        const socket = connect(port, '127.0.0.1')
        sockets.push(socket)
        socket.write(head(MAX_LEAK_REPORT_BYTES))
        socket.write(Buffer.alloc(MAX_BODY_BYTES + 1, 0x61))
        return new Promise<string>((resolve) => {
          let text = ''
          socket.on('data', (chunk: Buffer) => {
            text += chunk.toString('latin1')
          })
          socket.on('error', () => {})
          socket.on('close', () => resolve(text))
        })
      })
      // Every stalled read ends at its deadline, whatever the machine's load.
      await vi.waitFor(
        () => {
          expect(reads).toHaveLength(MAX_CONCURRENT_LARGE_BODIES)
          for (const read of reads) expect(read).toEqual({ ok: false, deadlineMs: DEADLINE_MS })
        },
        { timeout: 10_000, interval: 20 },
      )
      // Their connections are destroyed: the client is gone or hostile, the slot was what mattered.
      for (const answer of await Promise.all(answers)) expect(answer).not.toContain('HTTP/1.1 2')
      // The route is open again: a whole report is read (and, unsigned, refused for its signature).
      const body = Buffer.alloc(MAX_BODY_BYTES + 1, 0x61)
      const response = await fetch(`http://127.0.0.1:${port}${LEAK_REPORT_PATH}`, { method: 'POST', body })
      expect(response.status).toBe(401)
      expect(await response.json()).toMatchObject({ error: { code: 'invalid_signature' } })
    } finally {
      for (const socket of sockets) socket.destroy()
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    }
  })

  test("a read past its deadline is answered 408 in the server's error shape", async () => {
    const route = leakReportRoutes({
      tokens: new MemoryTokenStore(),
      keys: new Map() as unknown as SecretScanningKeys,
      replays: new MemoryReportReplayStore(),
      now: () => 0,
    }).routes[0]!
    const request = {
      body: bodyReader({ ok: false, deadlineMs: 30_000 }),
      headers: {} as IncomingHttpHeaders,
    }
    expect(await runRoute(route, request as unknown as ApiRequest, () => {})).toEqual({
      kind: 'json',
      status: 408,
      body: {
        error: {
          status: 408,
          message: 'Request timeout',
          code: 'body_read_timeout',
          detail: 'the body must arrive within 30 seconds',
        },
      },
    })
  })
})
