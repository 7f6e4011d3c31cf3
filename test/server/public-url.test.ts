/**
 * `--public-url` (design §9, issue 17): OAuth metadata's `issuer` and the device flow's
 * `verification_uri(_complete)` derive from it, or else from the listening address — never from the
 * request's `Host` header, on every framework. A bad value is exit code 2 and one line.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { type Console, run } from '../../examples/server/cli.js'
import { FRAMEWORKS } from '../../examples/server/flags.js'
import { parsePublicUrl } from '../../examples/server/public-origin.js'
import { type StartedServer, startServer } from '../../examples/server/server.js'
import { oauthSeed, pkcePair } from './oauth-fixtures.js'
import { WebClient } from './web-client.js'

function capture(): Console & { readonly out_: string[]; readonly err_: string[] } {
  const out_: string[] = []
  const err_: string[] = []
  return { out: (line) => out_.push(line), err: (line) => err_.push(line), out_, err_ }
}

describe('the --public-url flag', () => {
  test.each([
    ['https://data.example.org', 'https://data.example.org'],
    ['https://data.example.org/', 'https://data.example.org'],
    ['HTTPS://Data.Example.org:8443/gateway/', 'https://data.example.org:8443/gateway'],
    ['http://127.0.0.1:3000', 'http://127.0.0.1:3000'],
  ])('%s is %s', (value, expected) => {
    expect(parsePublicUrl(value)).toBe(expected)
  })

  test.each([
    ['data.example.org', 'is not a URL'],
    ['ftp://data.example.org', 'is not an http:// or https:// URL'],
    ['https://user:pass@data.example.org', 'must not hold a user name or password'],
    ['https://data.example.org/?a=1', 'must not have a query'],
    ['https://data.example.org/?', 'must not have a query'],
    ['https://data.example.org/#top', 'must not have a fragment'],
    ['', 'is not a URL'],
  ])('%j: exit code 2 and one line naming the flag', async (value, why) => {
    const io = capture()
    expect(await run(['--public-url', value, '--port', '0'], io)).toEqual({ exitCode: 2 })
    expect(io.err_).toEqual([`--public-url: ${JSON.stringify(value)} ${why}`])
    expect(io.out_).toEqual([])
  })

  test('--help names it', async () => {
    const io = capture()
    await run(['--help'], io)
    expect(io.out_.join('\n')).toContain('--public-url URL')
  })
})

const HOSTILE = { host: 'evil.example:8443', 'x-forwarded-host': 'evil.example' }

describe.each(FRAMEWORKS)('on %s', (framework) => {
  let listening: StartedServer
  let configured: StartedServer

  beforeAll(async () => {
    const seed = await oauthSeed()
    ;[listening, configured] = await Promise.all([
      startServer({ seed, framework, port: 0, trustProxy: ['loopback'] }),
      startServer({
        seed,
        framework,
        port: 0,
        trustProxy: ['loopback'],
        publicUrl: 'https://data.example.org/gw',
      }),
    ])
  })

  afterAll(async () => {
    await Promise.all([listening?.close(), configured?.close()])
  })

  // node:http, since fetch sends its own Host header whatever it is given.
  async function originsOf(server: StartedServer) {
    const client = new WebClient(server.port)
    const metadata = await client.get('/.well-known/oauth-authorization-server', { headers: HOSTILE })
    const body = JSON.parse(metadata.body) as Record<string, string>
    const fields = new URLSearchParams({
      client_id: 'web',
      scope: 'data.metadata',
      code_challenge: pkcePair().challenge,
      code_challenge_method: 'S256',
    })
    const answer = await client.post('/oauth/device_authorization', fields, { headers: HOSTILE })
    const device = JSON.parse(answer.body) as Record<string, string>
    return {
      issuer: body.issuer,
      token_endpoint: body.token_endpoint,
      verification_uri: device.verification_uri,
      verification_uri_complete: String(device.verification_uri_complete).split('?')[0],
    }
  }

  test('without it: the listening address, whatever the Host header says', async () => {
    expect(await originsOf(listening)).toEqual({
      issuer: listening.url,
      token_endpoint: `${listening.url}/oauth/token`,
      verification_uri: `${listening.url}/device`,
      verification_uri_complete: `${listening.url}/device`,
    })
  })

  test('with it: the public URL, path prefix included', async () => {
    expect(await originsOf(configured)).toEqual({
      issuer: 'https://data.example.org/gw',
      token_endpoint: 'https://data.example.org/gw/oauth/token',
      verification_uri: 'https://data.example.org/gw/device',
      verification_uri_complete: 'https://data.example.org/gw/device',
    })
  })
})
