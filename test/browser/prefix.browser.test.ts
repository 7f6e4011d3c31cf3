/**
 * Both browser flows in headless Chromium through a strict path-prefix proxy: the reference server
 * runs with `--public-url http://127.0.0.1:PROXY/dap`, and the proxy forwards only `/dap/…` and
 * `/.well-known/…` to it, unchanged, answering 404 to anything else. The client learns every
 * endpoint from discovery through the proxy; the browser follows only what the pages say (form
 * actions, redirects, `next`) and sends back only the cookies their `Path` allows. Each flow ends
 * with a token that reads the API through the proxy, and the proxy refused nothing a page led to.
 */
import { createHash, randomBytes } from 'node:crypto'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { FRAMEWORKS } from '../../examples/server/flags.js'
import { type StartedServer, startServer } from '../../examples/server/server.js'
import {
  ALICE_PASSWORD,
  basic,
  CLI_SECRET,
  DEVICE_GRANT,
  oauthSeed,
  pkcePair,
} from '../server/oauth-fixtures.js'
import { type PrefixProxy, startPrefixProxy } from '../server/prefix-proxy.js'
import { type LaunchedChromium, launchChromium, requireChromium } from './chromium.js'

// A hang bound only: scrypt sign-ins and Chromium on a busy machine.
const HANG = 120_000
const API_PATH = '/api/v1/datasets/acme/claims/metadata'

let browser: LaunchedChromium
let callbackServer: Server

beforeAll(async () => {
  requireChromium()
  // The client's redirect URI: a plain page, outside the proxy like any client's own site.
  callbackServer = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
    response.end('<!doctype html><title>Signed in</title><p>You can close this window.</p>')
  })
  await new Promise<void>((resolve) => callbackServer.listen(0, '127.0.0.1', resolve))
  browser = await launchChromium({ width: 1000, height: 900 })
}, HANG)

afterAll(async () => {
  await browser?.close()
  await new Promise((resolve) => callbackServer?.close(resolve))
})

type Metadata = Readonly<Record<string, string>>

async function postForm(url: string, fields: Record<string, string>, headers: Record<string, string> = {}) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(fields).toString(),
  })
  return { status: response.status, body: (await response.json()) as Record<string, unknown> }
}

async function readsApi(issuer: string, token: unknown): Promise<number> {
  const response = await fetch(`${issuer}${API_PATH}`, {
    headers: { authorization: `Bearer ${String(token)}` },
  })
  await response.arrayBuffer()
  return response.status
}

describe.each(FRAMEWORKS)('behind a strict /dap proxy on %s', (framework) => {
  let proxy: PrefixProxy
  let server: StartedServer
  let metadata: Metadata

  beforeAll(async () => {
    let port = 0
    proxy = await startPrefixProxy(() => port)
    server = await startServer({
      seed: await oauthSeed(),
      framework,
      host: '127.0.0.1',
      port: 0,
      publicUrl: proxy.publicUrl,
    })
    port = server.port
    // RFC 8414 §3.1: the path-inserted location, which the proxy forwards as it is.
    const host = new URL(proxy.publicUrl).origin
    const answer = await fetch(`${host}/.well-known/oauth-authorization-server/dap`)
    expect(answer.status).toBe(200)
    metadata = (await answer.json()) as Metadata
  }, HANG)

  afterAll(async () => {
    await server?.close()
    await proxy?.close()
  })

  // Chromium asks every host for its icon; nothing else may leave the prefix.
  const refusedByProxy = () => proxy.refused.filter((line) => line !== 'GET /favicon.ico')

  test(
    'authorization code with PKCE: sign-in, consent, the code exchanged, the API read',
    async () => {
      expect(metadata.issuer).toBe(proxy.publicUrl)
      await browser.context.clearCookies()
      const port = (callbackServer.address() as AddressInfo).port
      const redirectUri = `http://127.0.0.1:${port}/cb`
      const verifier = randomBytes(32).toString('base64url')
      const url = new URL(metadata.authorization_endpoint!)
      url.search = new URLSearchParams({
        response_type: 'code',
        client_id: 'cli',
        redirect_uri: redirectUri,
        scope: 'data.metadata',
        state: 'prefix-state',
        code_challenge: createHash('sha256').update(verifier).digest('base64url'),
        code_challenge_method: 'S256',
      }).toString()

      const page = await browser.context.newPage()
      await page.goto(url.toString())
      await page.getByLabel('Handle').fill('alice')
      await page.getByLabel('Password').fill(ALICE_PASSWORD)
      await page.getByRole('button', { name: 'Sign in' }).click()
      await page.getByRole('heading', { name: 'Allow access?' }).waitFor()
      expect(new URL(page.url()).pathname).toBe('/dap/oauth/authorize')
      const cookies = await browser.context.cookies()
      expect(cookies.length).toBeGreaterThan(0)
      expect(new Set(cookies.map((cookie) => cookie.path))).toEqual(new Set(['/dap']))

      await Promise.all([
        page.waitForURL((landed) => landed.port === String(port)),
        page.getByRole('button', { name: 'Allow access' }).click(),
      ])
      const landed = new URL(page.url())
      expect(landed.searchParams.get('state')).toBe('prefix-state')
      const code = landed.searchParams.get('code')
      expect(code).toBeTruthy()
      await page.close()

      const token = await postForm(
        metadata.token_endpoint!,
        { grant_type: 'authorization_code', code: code!, redirect_uri: redirectUri, code_verifier: verifier },
        { authorization: basic('cli', CLI_SECRET) },
      )
      expect(token.status).toBe(200)
      expect(await readsApi(proxy.publicUrl, token.body.access_token)).toBe(200)
      expect(refusedByProxy()).toEqual([])
    },
    HANG,
  )

  test(
    'device flow: the user code entered at /dap/device, sign-in, consent, the device polls a token, the API read',
    async () => {
      await browser.context.clearCookies()
      const { verifier, challenge } = pkcePair()
      const started = await postForm(metadata.device_authorization_endpoint!, {
        scope: 'data.metadata',
        code_challenge: challenge,
        code_challenge_method: 'S256',
      })
      expect(started.status).toBe(200)
      const verification = String(started.body.verification_uri)
      expect(verification).toBe(`${proxy.publicUrl}/device`)

      const page = await browser.context.newPage()
      await page.goto(verification)
      await page.getByLabel('Code from the device').fill(String(started.body.user_code))
      await page.getByRole('button', { name: 'Continue' }).click()
      await page.getByLabel('Handle').fill('alice')
      await page.getByLabel('Password').fill(ALICE_PASSWORD)
      await page.getByRole('button', { name: 'Sign in' }).click()
      await page.getByRole('heading', { name: 'Allow access?' }).waitFor()
      expect(new URL(page.url()).pathname).toBe('/dap/device')
      await page.getByRole('button', { name: 'Allow access' }).click()
      await page.getByRole('heading', { name: 'Device connected' }).waitFor()
      // The header's links lead back under the prefix, with the session's cookie.
      await page.getByRole('link', { name: 'API tokens' }).click()
      await page.getByRole('heading', { name: 'API tokens' }).waitFor()
      expect(new URL(page.url()).pathname).toBe('/dap/settings/tokens')
      await page.getByRole('button', { name: 'Sign out' }).click()
      await page.getByRole('heading', { name: 'Sign in' }).waitFor()
      expect(new URL(page.url()).pathname).toBe('/dap/signin')
      await page.close()

      const token = await postForm(metadata.token_endpoint!, {
        grant_type: DEVICE_GRANT,
        device_code: String(started.body.device_code),
        code_verifier: verifier,
      })
      expect(token.status).toBe(200)
      expect(await readsApi(proxy.publicUrl, token.body.access_token)).toBe(200)
      expect(refusedByProxy()).toEqual([])
    },
    HANG,
  )
})
