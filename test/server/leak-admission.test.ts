/**
 * The leak route admits strangers last, over real HTTP on 127.0.0.1 on Express, Fastify and Hono: a
 * body may pass the default 64 KiB only when its headers name a configured key and carry a
 * signature that parses, and one network holds at most one large-body slot. Stalled senders without
 * those headers — four, or forty — are refused as soon as they pass 64 KiB and hold no slot, so a
 * genuine signed report of 89 KB answers its normal status; reports within 64 KiB never wait for a
 * slot at all. Clients' networks come from `X-Forwarded-For`, trusted from loopback.
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
import { MAX_CONCURRENT_LARGE_BODIES } from '../../examples/server/request/body.js'
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

const servers = {} as Record<Framework, { server: RunningServer; app: App }>

beforeAll(async () => {
  vi.spyOn(console, 'error').mockImplementation(() => {})
  for (const framework of FRAMEWORKS) {
    const app = await createApp(await loadSeed(DEMO_SEED), {
      tokens: new MemoryTokenStore(),
      secretScanningKeys: KEYS,
    })
    const server = await BINDINGS[framework](app, { host: '127.0.0.1', port: 0, trustProxy: ['loopback'] })
    servers[framework] = { server, app }
  }
})

afterAll(async () => {
  await Promise.all(Object.values(servers).map(({ server }) => server.close()))
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

/** A sender that announces a whole report, sends `STALL_AFTER` bytes and stops; what it heard so far. */
interface Stalled {
  readonly socket: Socket
  heard(): string
}

function stall(port: number, headers: Record<string, string>): Stalled {
  const socket = connect(port, '127.0.0.1')
  let text = ''
  socket.on('data', (chunk: Buffer) => {
    text += chunk.toString('latin1')
  })
  socket.on('error', () => {})
  const lines = Object.entries({ 'content-type': 'application/json', ...headers })
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('')
  socket.write(
    `POST ${LEAK_REPORT_PATH} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: ${MAX_LEAK_REPORT_BYTES}\r\n${lines}\r\n`,
  )
  socket.write(Buffer.alloc(STALL_AFTER, 0x20))
  return { socket, heard: () => text }
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
