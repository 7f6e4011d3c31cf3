import { connect } from 'node:net'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { FRAMEWORKS, type Framework } from '../../examples/server/flags.js'
import { DEMO_SEED } from '../../examples/server/seed/demo.js'
import { loadSeed } from '../../examples/server/seed/load.js'
import { type StartedServer, startServer } from '../../examples/server/server.js'

const servers = {} as Record<Framework, StartedServer>

beforeAll(async () => {
  const seed = await loadSeed(DEMO_SEED)
  await Promise.all(
    FRAMEWORKS.map(async (framework) => {
      servers[framework] = await startServer({ seed, framework, port: 0 })
    }),
  )
})

afterAll(async () => {
  await Promise.all(Object.values(servers).map((server) => server.close()))
})

// A raw socket: node:http's client refuses to send a missing, repeated or odd Host.
function send(port: number, host: string[] | undefined): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const lines = [
      'GET /api/v1/datasets/acme/claims HTTP/1.1',
      ...(host ?? []).map((h) => `Host: ${h}`),
      'Connection: close',
    ]
    const socket = connect(port, '127.0.0.1', () => socket.end(`${lines.join('\r\n')}\r\n\r\n`))
    let raw = ''
    socket.setEncoding('utf8')
    socket.on('data', (chunk: string) => {
      raw += chunk
    })
    socket.on('end', () => {
      const [head = '', body = ''] = raw.split('\r\n\r\n')
      resolve({ status: Number(head.split(' ')[1]), body })
    })
    socket.on('error', reject)
  })
}

const INVALID_HOST = { error: { status: 400, message: 'Bad request', code: 'invalid_host' } }

describe('the front door checks Host the same way on every framework (RFC 9112 §3.2)', () => {
  test('no Host at all is refused by Node itself, alike everywhere', async () => {
    for (const framework of FRAMEWORKS) {
      expect({ framework, status: (await send(servers[framework].port, undefined)).status }).toEqual({
        framework,
        status: 400,
      })
    }
  })

  test.each([
    ['two Host headers', ['127.0.0.1', 'example.org']],
    ['user info in Host', ['a@b']],
    ['a path in Host', ['example.org/x']],
    ['an empty Host', ['']],
  ] as [string, string[]][])('%s → 400 invalid_host', async (_name, host) => {
    for (const framework of FRAMEWORKS) {
      const answer = await send(servers[framework].port, host)
      expect({ framework, status: answer.status, body: JSON.parse(answer.body) }).toEqual({
        framework,
        status: 400,
        body: INVALID_HOST,
      })
    }
  })

  test.each([['127.0.0.1:3000'], ['localhost'], ['[::1]:8080'], ['data.example.org']])(
    'Host %s passes on to the policy (401 without a token)',
    async (host) => {
      for (const framework of FRAMEWORKS) {
        const answer = await send(servers[framework].port, [host])
        expect({ framework, status: answer.status }).toEqual({ framework, status: 401 })
      }
    },
  )
})
