// Writes the screenshots of docs/workspace-settings.md (docs/images/settings-*.png): the reference
// server on the demo seed, with a 90-day lifetime cap and a leak-report key, driven through its
// pages by Debian's headless Chromium.
//   npx tsx scripts/capture-settings-screenshots.ts
import { generateKeyPairSync, sign } from 'node:crypto'
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chromium } from 'playwright-core'
import { parseSecretScanningKeys } from '../examples/server/leaks/secret-scanning-keys.js'
import { DEMO_SEED } from '../examples/server/seed/demo.js'
import { loadSeed } from '../examples/server/seed/load.js'
import { startServer } from '../examples/server/server.js'
import { CHROMIUM } from './test-tools.mjs'

const images = join(import.meta.dirname, '..', 'docs', 'images')
mkdirSync(images, { recursive: true })
const profile = mkdtempSync(join(tmpdir(), 'dap-chromium-'))
// A key pair standing in for GitHub's, to post the leak report whose revocation the list shows.
const github = generateKeyPairSync('ec', { namedCurve: 'prime256v1' })
const KEY_ID = 'screenshots'
const keys = JSON.stringify({
  public_keys: [{ key_identifier: KEY_ID, key: github.publicKey.export({ type: 'spki', format: 'pem' }) }],
})
const server = await startServer({
  seed: await loadSeed(DEMO_SEED),
  port: 0,
  maxTokenLifetimeDays: 90,
  secretScanningKeys: parseSecretScanningKeys(keys, 'keys.json'),
})
const context = await chromium.launchPersistentContext(profile, {
  executablePath: CHROMIUM,
  headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
  viewport: { width: 900, height: 720 },
})
try {
  const page = await context.newPage()
  const shot = (name: string, fullPage = true) => page.screenshot({ path: join(images, name), fullPage })

  await page.goto(`${server.url}/settings/tokens`)
  await page.getByLabel('Handle').fill('alice')
  await shot('settings-signin.png', false)
  await page.getByLabel('Password').fill('alice-demo-password')
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.waitForURL(`${server.url}/settings/tokens`)

  // A token found in public: created, then reported by a signed leak report.
  const create = async (name: string, lifetime: string) => {
    await page.goto(`${server.url}/settings/tokens`)
    await page.getByLabel('Name').fill(name)
    await page.getByLabel('data.metadata', { exact: true }).check()
    await page.getByLabel('Expiration').selectOption(lifetime)
    await page.getByRole('button', { name: 'Create token' }).click()
    await page.waitForLoadState()
    return page.getByLabel('Token value').inputValue()
  }
  const leaked = await create('laptop script', '30')
  const report = JSON.stringify([
    {
      token: leaked,
      type: 'data_access_policy_api_token',
      url: 'https://github.com/alice/notebooks/blob/3f2c1a9/analysis.py',
      source: 'content',
    },
  ])
  await fetch(`${server.url}/secret-scanning/report`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'github-public-key-identifier': KEY_ID,
      'github-public-key-signature': sign('sha256', Buffer.from(report), github.privateKey).toString(
        'base64',
      ),
    },
    body: report,
  })
  // One token about to expire, used once (the list shows where from).
  const weekly = await create('staging smoke test', '7')
  await fetch(`${server.url}/api/v1/datasets/acme/claims/metadata`, {
    headers: { authorization: `Bearer ${weekly}` },
  })

  await page.goto(`${server.url}/settings/tokens`)
  await page.getByLabel('Name').fill('nightly export')
  await page.getByLabel('data.data', { exact: true }).check()
  await page
    .locator('form[action="/settings/tokens"]')
    .screenshot({ path: join(images, 'settings-token-lifetime.png') })
  await page.getByRole('button', { name: 'Create token' }).click()
  await page.waitForLoadState()
  await shot('settings-token-created.png', false)

  // The list has seven columns: wide enough that its actions are in the picture.
  await page.setViewportSize({ width: 1280, height: 720 })
  await page.goto(`${server.url}/settings/tokens`)
  await shot('settings-token-leaked.png', false)
  await page.locator('main').screenshot({ path: join(images, 'settings-token-list.png') })
  await page.setViewportSize({ width: 900, height: 720 })

  const row = page.getByRole('row').filter({ hasText: 'nightly export' })
  await row.getByRole('link', { name: 'Edit nightly export' }).click()
  await page.waitForLoadState()
  await shot('settings-token-edit.png', false)

  await page.goto(`${server.url}/settings/tokens`)
  await row.getByRole('link', { name: 'Regenerate nightly export' }).click()
  await page.waitForLoadState()
  await shot('settings-token-regenerate.png', false)

  await page.goto(`${server.url}/settings/tokens`)
  await row.getByRole('button', { name: 'Revoke nightly export' }).click()
  await page.waitForLoadState()
  await shot('settings-token-revoke.png', false)
  console.log(`wrote docs/images/settings-*.png`)
} finally {
  await context.close()
  await server.close()
  rmSync(profile, { recursive: true, force: true })
}
