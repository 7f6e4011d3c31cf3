/**
 * The reference server behind a path prefix (`--public-url https://data.example.org/dap`): the
 * framework sees the path without the prefix, yet a proof names the public URL, prefix included.
 */
import { afterAll, beforeAll, expect, test } from 'vitest'
import { loadSeed } from '../../examples/server/seed/load.js'
import { type StartedServer, startServer } from '../../examples/server/server.js'
import { createOAuthToken } from '../../src/tokens/token-record.js'
import { sendRaw } from '../adapters/http-client.js'
import { CONFORMANCE_SEED } from '../conformance/seed.js'
import { type DpopKey, dpopKey, dpopProof } from './proofs.js'

const PUBLIC = 'https://data.example.org/dap'
const PATH = '/api/v1/datasets/owner/o-open'

let server: StartedServer
let key: DpopKey
let token: string

beforeAll(async () => {
  key = await dpopKey()
  server = await startServer({
    seed: await loadSeed(CONFORMANCE_SEED),
    framework: 'hono',
    host: '127.0.0.1',
    port: 0,
    publicUrl: PUBLIC,
  })
  const created = createOAuthToken({ userId: 'u', scopes: 'data.data', dpopJkt: key.jkt, now: Date.now() })
  await server.app.tokens.save(created.record)
  token = created.value
})

afterAll(async () => {
  await server?.close()
})

test('a proof for the public URL, prefix included, is accepted; one without the prefix is not', async () => {
  const send = async (url: string) =>
    sendRaw(server.port, {
      path: `/dap${PATH}`,
      headers: { authorization: `DPoP ${token}`, dpop: await dpopProof(key, { method: 'GET', url, token }) },
    })
  expect((await send(`${PUBLIC}${PATH}`)).status).toBe(200)
  const refused = await send(`https://data.example.org${PATH}`)
  expect(refused.status).toBe(401)
  expect(refused.headers['www-authenticate']).toContain('error="invalid_dpop_proof"')
})
