/**
 * The leak route admits strangers last, over real HTTP on 127.0.0.1 on Express, Fastify and Hono: a
 * body may pass the default 64 KiB only when its headers name a configured key and carry a
 * signature that parses, declares its length, and its network (its IPv6 /48 too) holds no other
 * large-body slot; a slot holder that falls behind the pace loses it. Stalled senders without those
 * headers — four, or forty — are refused as soon as they pass 64 KiB; stalled senders that copy a
 * published key identifier and a signature-shaped header hold slots only for the grace. Either
 * way a genuine signed report of 89 KB answers its normal status; reports within 64 KiB never
 * wait for a slot at all. Clients' networks come from `X-Forwarded-For`, trusted from loopback.
 *
 * Each framework runs twice: with the bindings' pace, and with a pace no test waits out, for the
 * tests that need a slot held.
 */
import { generateKeyPairSync, sign } from 'node:crypto'
import { connect, type Socket } from 'node:net'
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest'
import { type App, createApp } from '../../examples/server/app.js'
import { FRAMEWORKS, type Framework } from '../../examples/server/flags.js'
import { startExpress } from '../../examples/server/http/express.js'
import { startFastify } from '../../examples/server/http/fastify.js'
import type { RunningServer } from '../../examples/server/http/front-door.js'
import { startHono } from '../../examples/server/http/hono.js'
import {
  isDerEcdsaSignature,
  LEAK_REPORT_PATH,
  MAX_LEAK_REPORT_BYTES,
} from '../../examples/server/leaks/leak-reports.js'
import { parseSecretScanningKeys } from '../../examples/server/leaks/secret-scanning-keys.js'
import {
  LARGE_BODY_PACE,
  type LargeBodyPace,
  MAX_CONCURRENT_LARGE_BODIES,
} from '../../examples/server/request/body.js'
import { MAX_BODY_BYTES } from '../../examples/server/routes/route-set.js'
import { DEMO_SEED } from '../../examples/server/seed/demo.js'
import { loadSeed } from '../../examples/server/seed/load.js'
import { hashTokenValue, MemoryTokenStore } from '../../src/index.js'
import { generateTokenValue } from '../../src/tokens/token-format.js'

const BINDINGS = { express: startExpress, fastify: startFastify, hono: startHono } as const
const github = generateKeyPairSync('ec', { namedCurve: 'prime256v1' })
const KEY_ID = 'bcb53661c06b4728e59d897fb6165d5c9cda0fd9cdf9d09ead458168deb7518c'
const KEYS = parseSecretScanningKeys(
  JSON.stringify({
    public_keys: [{ key_identifier: KEY_ID, key: github.publicKey.export({ type: 'spki', format: 'pem' }) }],
  }),
  'keys.json',
)
// What a stalled sender sends before it stops: past the default cap, far from a whole report.
const STALL_AFTER = 70_000

type Servers = Record<Framework, { server: RunningServer; app: App }>
const servers = {} as Servers
const patientServers = {} as Servers
const PATIENT: LargeBodyPace = { graceMs: 60_000, bytesPerSecond: 1 }

beforeAll(async () => {
  vi.spyOn(console, 'error').mockImplementation(() => {})
  for (const framework of FRAMEWORKS) {
    for (const [into, pace] of [
      [servers, LARGE_BODY_PACE],
      [patientServers, PATIENT],
    ] as const) {
      const app = await createApp(await loadSeed(DEMO_SEED), {
        tokens: new MemoryTokenStore(),
        secretScanningKeys: KEYS,
        largeBodyPace: pace,
      })
      const server = await BINDINGS[framework](app, { host: '127.0.0.1', port: 0, trustProxy: ['loopback'] })
      into[framework] = { server, app }
    }
  }
})

afterAll(async () => {
  await Promise.all(
    [...Object.values(servers), ...Object.values(patientServers)].map(({ server }) => server.close()),
  )
  vi.restoreAllMocks()
})

const signature = (body: string) => sign('sha256', Buffer.from(body), github.privateKey).toString('base64')

let reports = 0

/** A genuine report of about `bytes` bytes naming one token (unknown to the server: a false positive). */
function genuineReport(bytes: number): { body: string; token: string } {
  const token = generateTokenValue('api')
  const url = `https://github.com/octocat/leaky/blob/${++reports}/`
  const padded = url + 'd/'.repeat(Math.max(0, (bytes - url.length - 120) / 2))
  const body = JSON.stringify([
    { token, type: 'data_access_policy_api_token', url: padded, source: 'content' },
  ])
  return { body, token }
}

async function sendReport(port: number, body: string, network?: string) {
  const response = await fetch(`http://127.0.0.1:${port}${LEAK_REPORT_PATH}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'github-public-key-identifier': KEY_ID,
      'github-public-key-signature': signature(body),
      ...(network === undefined ? {} : { 'x-forwarded-for': network }),
    },
    body,
  })
  return { status: response.status, body: (await response.json()) as unknown }
}

/** A sender that announces a whole report, sends `bytes` bytes and stops; what it heard so far. */
interface Stalled {
  readonly socket: Socket
  heard(): string
  /** Whether the server closed the connection (or it failed). */
  closed(): boolean
}

function stall(port: number, headers: Record<string, string>, bytes = STALL_AFTER): Stalled {
  const socket = connect(port, '127.0.0.1')
  let text = ''
  let closed = false
  socket.on('data', (chunk: Buffer) => {
    text += chunk.toString('latin1')
  })
  socket.on('error', () => {})
  socket.on('close', () => {
    closed = true
  })
  const lines = Object.entries({ 'content-type': 'application/json', ...headers })
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('')
  socket.write(
    `POST ${LEAK_REPORT_PATH} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: ${MAX_LEAK_REPORT_BYTES}\r\n${lines}\r\n`,
  )
  socket.write(Buffer.alloc(bytes, 0x20))
  return { socket, heard: () => text, closed: () => closed }
}

// Strangers: no signature headers, an unknown key, a known key with a signature that does not parse.
const STRANGER_HEADERS: readonly Record<string, string>[] = [
  {},
  { 'github-public-key-identifier': 'someone-else', 'github-public-key-signature': signature('x') },
  { 'github-public-key-identifier': KEY_ID, 'github-public-key-signature': 'bm90IGEgc2lnbmF0dXJl' },
  { 'github-public-key-identifier': KEY_ID },
]

// A sender that knows a public key id and sends a real signature (of another body): it may hold a
// slot, one per network, until it ends or its deadline passes.
const knownSender = (network: string) => ({
  'github-public-key-identifier': KEY_ID,
  'github-public-key-signature': signature('another body'),
  'x-forwarded-for': network,
})

async function release(stalled: readonly Stalled[], port: number): Promise<void> {
  for (const each of stalled) each.socket.destroy()
  // Every slot is free again: a large report from a fresh network is read.
  await vi.waitFor(
    async () => expect((await sendReport(port, genuineReport(89_000).body, '192.0.2.250')).status).toBe(200),
    { timeout: 20_000, interval: 50 },
  )
}

describe.each(FRAMEWORKS)('%s', (framework) => {
  const port = () => servers[framework].server.port

  test.each([4, 40])(
    '%i unauthenticated stalled senders do not delay a genuine signed 89 KB report',
    async (count) => {
      const stalled = Array.from({ length: count }, (_, index) =>
        stall(port(), STRANGER_HEADERS[index % STRANGER_HEADERS.length]!),
      )
      try {
        // Each is refused as soon as it passes the default cap, and keeps its connection.
        await vi.waitFor(
          () => {
            for (const each of stalled) expect(each.heard()).toMatch(/^HTTP\/1\.1 401 /)
          },
          { timeout: 20_000, interval: 20 },
        )
        for (const each of stalled) expect(each.heard()).toContain('invalid_signature')
        const { body, token } = genuineReport(89_000)
        expect(Buffer.byteLength(body)).toBeGreaterThan(88_000)
        const answer = await sendReport(port(), body)
        expect(answer).toEqual({
          status: 200,
          body: [
            {
              token_hash: hashTokenValue(token),
              token_type: 'data_access_policy_api_token',
              label: 'false_positive',
            },
          ],
        })
      } finally {
        await release(stalled, port())
      }
    },
    60_000,
  )

  test('a network holds one large-body slot; other networks go on', async () => {
    const port = () => patientServers[framework].server.port
    const first = stall(port(), knownSender('198.51.100.7'))
    try {
      // The slot is held once a second large read from that network is turned away.
      await vi.waitFor(
        async () => {
          const again = await sendReport(port(), genuineReport(89_000).body, '198.51.100.7')
          expect(again.status).toBe(503)
          expect(again.body).toMatchObject({ error: { code: 'service_unavailable' } })
        },
        { timeout: 20_000, interval: 50 },
      )
      expect((await sendReport(port(), genuineReport(89_000).body, '198.51.100.8')).status).toBe(200)
      expect(first.heard()).toBe('')
    } finally {
      await release([first], port())
    }
  }, 60_000)

  test(`reports within ${MAX_BODY_BYTES} bytes never wait for the large-body slots`, async () => {
    const port = () => patientServers[framework].server.port
    const stalled = Array.from({ length: MAX_CONCURRENT_LARGE_BODIES }, (_, index) =>
      stall(port(), knownSender(`203.0.113.${index + 1}`)),
    )
    try {
      // Every slot is held: a large report from yet another network is turned away (503).
      await vi.waitFor(
        async () =>
          expect((await sendReport(port(), genuineReport(89_000).body, '203.0.113.99')).status).toBe(503),
        { timeout: 20_000, interval: 50 },
      )
      const { body } = genuineReport(MAX_BODY_BYTES - 200)
      expect(Buffer.byteLength(body)).toBeLessThanOrEqual(MAX_BODY_BYTES)
      expect((await sendReport(port(), body, '203.0.113.99')).status).toBe(200)
    } finally {
      await release(stalled, port())
    }
  }, 60_000)

  // The security review's exploit: a published key identifier, an 8-byte "signature" that only has
  // the shape of one (30 06 02 01 01 02 01 01), 64 KiB + 1 bytes, then nothing.
  const EXPLOIT_SIGNATURE = 'MAYCAQECAQE='
  const exploit = (network: string) => ({
    'github-public-key-identifier': KEY_ID,
    'github-public-key-signature': EXPLOIT_SIGNATURE,
    'x-forwarded-for': network,
  })

  test.each([
    [
      'four /64s of one /48',
      ['2001:db8:77:1::1', '2001:db8:77:2::1', '2001:db8:77:3::1', '2001:db8:77:4::1'],
    ],
    ['four /48s', ['2001:db8:1:1::1', '2001:db8:2:1::1', '2001:db8:3:1::1', '2001:db8:4:1::1']],
  ])(
    'stalled senders with a published key id and a shaped signature from %s do not keep a genuine report out',
    async (_what, networks) => {
      expect(isDerEcdsaSignature(Buffer.from(EXPLOIT_SIGNATURE, 'base64'))).toBe(true)
      const stalled = networks.map((network) => stall(port(), exploit(network), MAX_BODY_BYTES + 1))
      try {
        const { body, token } = genuineReport(89_000)
        // Turned away only while the stalled senders' grace lasts (503 asks the sender to retry).
        let answer = await sendReport(port(), body)
        await vi.waitFor(
          async () => {
            if (answer.status === 503) answer = await sendReport(port(), body)
            expect(answer.status).not.toBe(503)
          },
          { timeout: 30_000, interval: 100 },
        )
        expect(answer).toEqual({
          status: 200,
          body: [
            {
              token_hash: hashTokenValue(token),
              token_type: 'data_access_policy_api_token',
              label: 'false_positive',
            },
          ],
        })
        // Every stalled sender is turned away: 503 for one /48's second slot, the rest dropped.
        await vi.waitFor(
          () => {
            for (const each of stalled)
              expect(each.closed() || /^HTTP\/1\.1 503 /.test(each.heard())).toBe(true)
          },
          { timeout: 30_000, interval: 50 },
        )
      } finally {
        await release(stalled, port())
      }
    },
    60_000,
  )

  test('a slot holder that falls behind the pace is dropped, and its slot freed', async () => {
    const slow = stall(port(), knownSender('198.51.100.20'))
    try {
      await vi.waitFor(() => expect(slow.closed()).toBe(true), { timeout: 30_000, interval: 50 })
      expect(slow.heard()).not.toMatch(/^HTTP\/1\.1 2/)
      // Its network may send a large report again.
      expect((await sendReport(port(), genuineReport(89_000).body, '198.51.100.20')).status).toBe(200)
    } finally {
      await release([slow], port())
    }
  }, 60_000)

  test('a chunked report past 64 KiB without Content-Length gets no slot: 411', async () => {
    const socket = connect(port(), '127.0.0.1')
    let text = ''
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1')
    })
    socket.on('error', () => {})
    const chunk = Buffer.alloc(STALL_AFTER, 0x20)
    socket.write(
      `POST ${LEAK_REPORT_PATH} HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n` +
        `content-type: application/json\r\ngithub-public-key-identifier: ${KEY_ID}\r\n` +
        `github-public-key-signature: ${signature('another body')}\r\n\r\n`,
    )
    socket.write(`${chunk.length.toString(16)}\r\n`)
    socket.write(chunk)
    socket.write('\r\n')
    try {
      await vi.waitFor(() => expect(text).toMatch(/^HTTP\/1\.1 411 /), { timeout: 20_000, interval: 20 })
      expect(text).toContain('length_required')
    } finally {
      socket.destroy()
    }
  }, 60_000)
})

describe('isDerEcdsaSignature', () => {
  const real = sign('sha256', Buffer.from('body'), github.privateKey)

  test.each([
    ['a real signature', real, true],
    ['nothing', Buffer.alloc(0), false],
    ['text', Buffer.from('not a signature'), false],
    [
      'a sequence whose length is wrong',
      Buffer.from([0x30, 0x07, 0x02, 0x01, 0x01, 0x02, 0x01, 0x01]),
      false,
    ],
    [
      'a sequence of two one-byte integers',
      Buffer.from([0x30, 0x06, 0x02, 0x01, 0x01, 0x02, 0x01, 0x01]),
      true,
    ],
    ['an integer that is not one', Buffer.from([0x30, 0x06, 0x04, 0x01, 0x01, 0x02, 0x01, 0x01]), false],
    ['an empty integer', Buffer.from([0x30, 0x06, 0x02, 0x00, 0x02, 0x02, 0x01, 0x01]), false],
    ['an integer running past the end', Buffer.from([0x30, 0x06, 0x02, 0x01, 0x01, 0x02, 0x05, 0x01]), false],
    [
      'bytes after the second integer',
      Buffer.from([0x30, 0x07, 0x02, 0x01, 0x01, 0x02, 0x01, 0x01, 0x00]),
      false,
    ],
    ['more than 72 bytes', Buffer.concat([real, Buffer.alloc(73 - real.length)]), false],
  ])('%s: %s', (_what, der, expected) => {
    expect(isDerEcdsaSignature(der)).toBe(expected)
  })
})
