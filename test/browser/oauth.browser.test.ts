/**
 * The authorization-code flow in a real browser: headless Chromium from Debian, driven by
 * `playwright-core`, opens the authorization URL, signs in, approves on the consent page and lands
 * on the client's redirect URI — a small HTTP server on 127.0.0.1 that records the callback — with
 * a code that the token endpoint accepts. A screenshot of the consent page goes to `test-output/`.
 * Chromium missing is a failure, never a skip: `npm test` installs it first.
 */
import { createHash, randomBytes } from 'node:crypto'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { type StartedServer, startServer } from '../../examples/server/server.js'
import { ALICE_PASSWORD, basic, CLI_SECRET, oauthSeed } from '../server/oauth-fixtures.js'
import { type LaunchedChromium, launchChromium, OUTPUT, requireChromium } from './chromium.js'

let browser: LaunchedChromium
let server: StartedServer
let callbackServer: Server
const callbacks: URL[] = []

beforeAll(async () => {
  requireChromium()
  server = await startServer({ seed: await oauthSeed(), framework: 'fastify', port: 0 })
  // The client's redirect URI: records every request and answers a plain page.
  callbackServer = createServer((request, response) => {
    callbacks.push(new URL(request.url ?? '/', 'http://127.0.0.1'))
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
    response.end('<!doctype html><title>Signed in</title><p>You can close this window.</p>')
  })
  await new Promise<void>((resolve) => callbackServer.listen(0, '127.0.0.1', resolve))
  browser = await launchChromium({ width: 1000, height: 900 })
}, 60_000)

afterAll(async () => {
  await browser?.close()
  await server?.close()
  await new Promise((resolve) => callbackServer?.close(resolve))
})

test('sign in, approve on the consent page, land on the redirect URI with a code', async () => {
  const port = (callbackServer.address() as AddressInfo).port
  // `cli` registered http://127.0.0.1:8765/cb; a loopback redirect URI may vary its port (RFC 8252).
  const redirectUri = `http://127.0.0.1:${port}/cb`
  const verifier = randomBytes(32).toString('base64url')
  const url = new URL('/oauth/authorize', server.url)
  url.search = new URLSearchParams({
    response_type: 'code',
    client_id: 'cli',
    redirect_uri: redirectUri,
    scope: 'data.metadata wokflow.read',
    state: 'browser-state',
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
  }).toString()

  const page = await browser.context.newPage()
  await page.goto(url.toString())
  await page.getByLabel('Handle').fill('alice')
  await page.getByLabel('Password').fill(ALICE_PASSWORD)
  await page.getByRole('button', { name: 'Sign in' }).click()

  await page.getByRole('heading', { name: 'Allow access?' }).waitFor()
  expect(await page.getByText('Application: cli (a client registered with this server)').isVisible()).toBe(
    true,
  )
  expect(await page.getByText(`127.0.0.1:${port}`).isVisible()).toBe(true)
  expect(await page.getByText('Read access to workflows and the contents of their nodes.').isVisible()).toBe(
    true,
  )
  await page.screenshot({ path: join(OUTPUT, 'oauth-consent.png'), fullPage: true })

  await Promise.all([
    page.waitForURL((landed) => landed.port === String(port)),
    page.getByRole('button', { name: 'Allow access' }).click(),
  ])
  const landed = new URL(page.url())
  expect(`${landed.origin}${landed.pathname}`).toBe(redirectUri)
  expect(landed.searchParams.get('state')).toBe('browser-state')
  const code = landed.searchParams.get('code')
  expect(code).toMatch(/^[0-9A-Za-z]+$/)
  expect(callbacks.map((callback) => callback.searchParams.get('code'))).toContain(code)

  // The code the browser brought back is good for a token.
  const token = await fetch(`${server.url}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic('cli', CLI_SECRET) },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code: code!,
      redirect_uri: redirectUri,
      code_verifier: verifier,
    }).toString(),
  })
  expect(token.status).toBe(200)
  await page.close()
}, 60_000)
