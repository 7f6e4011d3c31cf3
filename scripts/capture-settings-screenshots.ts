// Writes the screenshots of docs/workspace-settings.md (docs/images/settings-*.png): the reference
// server on the demo seed, driven through its pages by Debian's headless Chromium.
//   npx tsx scripts/capture-settings-screenshots.ts
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chromium } from 'playwright-core'
import { DEMO_SEED } from '../examples/server/seed/demo.js'
import { loadSeed } from '../examples/server/seed/load.js'
import { startServer } from '../examples/server/server.js'
import { CHROMIUM } from './test-tools.mjs'

const images = join(import.meta.dirname, '..', 'docs', 'images')
mkdirSync(images, { recursive: true })
const profile = mkdtempSync(join(tmpdir(), 'dap-chromium-'))
const server = await startServer({ seed: await loadSeed(DEMO_SEED), port: 0 })
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

  await page.getByLabel('Name').fill('nightly export')
  await page.getByLabel('data.data', { exact: true }).check()
  await page.getByRole('button', { name: 'Create token' }).click()
  await page.waitForLoadState()
  await shot('settings-token-created.png', false)

  await page.goto(`${server.url}/settings/tokens`)
  await shot('settings-token-list.png', false)

  const row = page.getByRole('row').filter({ hasText: 'nightly export' })
  await row.getByRole('link', { name: 'Edit nightly export' }).click()
  await page.waitForLoadState()
  await shot('settings-token-edit.png', false)

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
