/**
 * The settings pages on a phone: headless Chromium at 390 px wide (an iPhone 12 to 15) signs in,
 * fills the token list, and checks that nothing overflows the page sideways — the token list with
 * its Edit, Regenerate and Revoke controls, the create form (with its error messages), and the
 * OAuth consent page — and that every action lies within the screen, reachable without horizontal
 * scrolling. Screenshots go to `test-output/`.
 */
import { createHash, randomBytes } from 'node:crypto'
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { type StartedServer, startServer } from '../../examples/server/server.js'
import { ALICE_PASSWORD, oauthSeed } from '../server/oauth-fixtures.js'
import { type LaunchedChromium, launchChromium, OUTPUT, requireChromium } from './chromium.js'

const PHONE = { width: 390, height: 844 }

let browser: LaunchedChromium
let server: StartedServer

beforeAll(async () => {
  requireChromium()
  server = await startServer({ seed: await oauthSeed(), framework: 'fastify', port: 0 })
  browser = await launchChromium(PHONE)
}, 60_000)

afterAll(async () => {
  await browser?.close()
  await server?.close()
})

/** How far the page reaches past the screen sideways, in CSS pixels; 0 when it fits. */
function overflow(page: Page): Promise<number> {
  return page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)
}

/** The visible controls named `name` that lie (partly) outside the screen's width. */
async function offScreen(page: Page, name: RegExp): Promise<string[]> {
  const outside: string[] = []
  for (const control of await page.getByRole('link', { name }).or(page.getByRole('button', { name })).all()) {
    const box = await control.boundingBox()
    if (box !== null && (box.x < 0 || box.x + box.width > PHONE.width)) {
      outside.push(`${(await control.textContent())?.trim()} at ${box.x}+${box.width}`)
    }
  }
  return outside
}

async function signIn(page: Page, next: string): Promise<void> {
  await page.goto(`${server.url}${next}`)
  await page.getByLabel('Handle').fill('alice')
  await page.getByLabel('Password').fill(ALICE_PASSWORD)
  await page.getByRole('button', { name: 'Sign in' }).click()
}

async function createToken(page: Page, name: string): Promise<void> {
  await page.getByLabel('Name').fill(name)
  for (const scope of ['data.metadata', 'data.data', 'workflow.read']) {
    const box = page.getByLabel(scope, { exact: true })
    if ((await box.count()) === 1) await box.check()
  }
  await page.getByRole('button', { name: 'Create token' }).click()
  await page.getByRole('heading', { level: 1 }).waitFor()
  await page.goto(`${server.url}/settings/tokens`)
}

test('at 390 px the token list, the create form and the consent page fit the screen', async () => {
  const page = await browser.context.newPage()
  try {
    await signIn(page, '/settings/tokens')
    await page.waitForURL(`${server.url}/settings/tokens`)
    await createToken(page, 'deploy-pipeline-production-eu-west-1')
    await createToken(page, 'a rather long token name for the nightly export job')

    // The list: no sideways scrolling, and every row's actions on the screen.
    expect(await overflow(page)).toBeLessThanOrEqual(0)
    const actions = /^(Edit|Regenerate|Revoke)\b/
    expect(await page.getByRole('button', { name: /^Revoke\b/ }).count()).toBeGreaterThanOrEqual(2)
    expect(await offScreen(page, actions)).toEqual([])
    await page.screenshot({ path: join(OUTPUT, 'phone-token-list.png'), fullPage: true })

    // The create form, sent empty: its error messages fit too.
    await page.getByRole('button', { name: 'Create token' }).click()
    await page.getByRole('alert').first().waitFor()
    expect(await overflow(page)).toBeLessThanOrEqual(0)
    expect(await offScreen(page, /^Create token$/)).toEqual([])
    await page.screenshot({ path: join(OUTPUT, 'phone-create-form.png'), fullPage: true })

    // The consent page of an authorization request.
    const url = new URL('/oauth/authorize', server.url)
    url.search = new URLSearchParams({
      response_type: 'code',
      client_id: 'cli',
      redirect_uri: 'http://127.0.0.1:8765/cb',
      scope: 'data.metadata wokflow.read',
      state: 'phone',
      code_challenge: createHash('sha256').update(randomBytes(32).toString('base64url')).digest('base64url'),
      code_challenge_method: 'S256',
    }).toString()
    await page.goto(url.href)
    await page
      .getByRole('button', { name: /approve|allow/i })
      .first()
      .waitFor()
    expect(await overflow(page)).toBeLessThanOrEqual(0)
    expect(await offScreen(page, /approve|allow|deny/i)).toEqual([])
    await page.screenshot({ path: join(OUTPUT, 'phone-consent.png'), fullPage: true })
  } finally {
    await page.close()
  }
}, 60_000)
