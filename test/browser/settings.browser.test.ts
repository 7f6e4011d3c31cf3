/**
 * Workspace settings in a real browser (issue 8): headless Chromium from Debian, driven by
 * `playwright-core`, signs in, creates a token through the form, reads the value from the page,
 * calls the API with it (200), revokes it through the confirmation and sees the next call fail
 * (401) — on Express, Fastify and Hono. Screenshots of the token list and the one-time value page
 * go to `test-output/`. Chromium missing is a failure, never a skip: `npm test` installs it first.
 */
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { FRAMEWORKS, type Framework } from '../../examples/server/flags.js'
import { DEMO_SEED } from '../../examples/server/seed/demo.js'
import { loadSeed } from '../../examples/server/seed/load.js'
import { type StartedServer, startServer } from '../../examples/server/server.js'
import { isWellFormedTokenValue } from '../../src/index.js'
import { type LaunchedChromium, launchChromium, OUTPUT, requireChromium } from './chromium.js'

let browser: LaunchedChromium
const servers = {} as Record<Framework, StartedServer>

beforeAll(async () => {
  requireChromium()
  browser = await launchChromium({ width: 1100, height: 900 })
  const seed = await loadSeed(DEMO_SEED)
  await Promise.all(
    FRAMEWORKS.map(async (framework) => {
      servers[framework] = await startServer({ seed, framework, port: 0 })
    }),
  )
}, 60_000)

afterAll(async () => {
  await browser?.close()
  await Promise.all(Object.values(servers).map((server) => server.close()))
})

async function callApi(server: StartedServer, value: string): Promise<number> {
  const response = await fetch(`${server.url}/api/v1/datasets/acme/claims/metadata`, {
    headers: { authorization: `Bearer ${value}` },
  })
  return response.status
}

// Every visible form control has a label, every button a name: what a screen reader needs.
async function expectLabelled(page: Page): Promise<void> {
  const unlabelled = await page.evaluate(() => {
    const problems: string[] = []
    for (const input of Array.from(document.querySelectorAll<HTMLInputElement>('input:not([type=hidden])'))) {
      if ((input.labels?.length ?? 0) === 0) problems.push(`input ${input.name || input.id}`)
    }
    for (const button of Array.from(document.querySelectorAll('button'))) {
      if ((button.textContent ?? '').trim() === '') problems.push('a button without text')
    }
    return problems
  })
  expect(unlabelled).toEqual([])
}

describe.each(FRAMEWORKS)('%s', (framework) => {
  test('sign in, create a token through the form, use it, revoke it through the confirmation', async () => {
    const server = servers[framework]
    const page = await browser.context.newPage()
    try {
      // Signed out, the settings send to sign-in, and back after it.
      await page.goto(`${server.url}/settings/tokens`)
      expect(new URL(page.url()).pathname).toBe('/signin')
      await expectLabelled(page)
      await page.getByLabel('Handle').fill('alice')
      await page.getByLabel('Password').fill('alice-demo-password')
      await page.getByRole('button', { name: 'Sign in' }).click()
      await page.waitForURL(`${server.url}/settings/tokens`)
      await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('API tokens')
      await expectLabelled(page)

      // Create.
      const name = `browser ${framework}`
      await page.getByLabel('Name').fill(name)
      await page.getByLabel('data.metadata', { exact: true }).check()
      await expect(page.getByLabel('public (always included)').isChecked()).resolves.toBe(true)
      await expect(page.getByLabel('public (always included)').isDisabled()).resolves.toBe(true)
      await page.getByRole('button', { name: 'Create token' }).click()
      await page.waitForLoadState()
      const value = await page.getByLabel('Token value').inputValue()
      expect(isWellFormedTokenValue(value)).toBe(true)
      await expect(page.getByText('It will not be shown again').isVisible()).resolves.toBe(true)
      await page.getByRole('button', { name: 'Copy' }).click()
      // The clipboard answers asynchronously; either way the page says what happened.
      await page.waitForFunction(() => (document.getElementById('copy-status')?.textContent ?? '') !== '')
      await expect(page.locator('#copy-status').textContent()).resolves.toMatch(/Copied|selected/)
      await expectLabelled(page)
      if (framework === 'fastify') {
        await page.screenshot({ path: join(OUTPUT, 'settings-token-created.png'), fullPage: true })
      }

      // Use it.
      expect(await callApi(server, value)).toBe(200)

      // The list shows the hint, never the value, even right after.
      await page.goto(`${server.url}/settings/tokens`)
      const row = page.getByRole('row').filter({ hasText: name })
      await expect(row.textContent()).resolves.toContain(`${value.slice(0, 4)}…${value.slice(-4)}`)
      expect(await page.content()).not.toContain(value)
      if (framework === 'fastify') {
        await page.screenshot({ path: join(OUTPUT, 'settings-token-list.png'), fullPage: true })
      }

      // Revoke, through the confirmation.
      await row.getByRole('button', { name: `Revoke ${name}` }).click()
      // The click only starts the navigation: wait for the confirmation page itself.
      await expect
        .poll(() => page.getByRole('heading', { level: 1 }).textContent(), { timeout: 60_000, interval: 100 })
        .toBe(`Revoke “${name}”?`)
      if (framework === 'fastify') {
        await page.screenshot({ path: join(OUTPUT, 'settings-token-revoke.png'), fullPage: true })
      }
      await page.getByRole('button', { name: `Revoke “${name}”` }).click()
      await page.waitForURL(`${server.url}/settings/tokens`)
      await expect(page.getByRole('status').first().textContent()).resolves.toContain(`Revoked “${name}”`)
      // Gone from the tokens in use; listed, struck through, among the recently revoked.
      const inUse = page.getByRole('table', { name: /^Your API tokens/ })
      await expect(inUse.getByRole('row').filter({ hasText: name }).count()).resolves.toBe(0)
      const revoked = page.getByRole('table', { name: /^Tokens revoked in the last 30 days/ })
      await expect(revoked.getByRole('row').filter({ hasText: name }).count()).resolves.toBe(1)

      expect(await callApi(server, value)).toBe(401)
    } finally {
      await page.close()
    }
  })
})
