/**
 * Debian's headless Chromium for the browser tests, driven by `playwright-core`: a fresh profile
 * each launch, and a clear failure — never a skip — when Chromium is missing (`npm test` installs it
 * first, scripts/provision-test-tools.mjs).
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type BrowserContext, chromium } from 'playwright-core'
import { CHROMIUM, installCommand } from '../../scripts/test-tools.mjs'

/** Where the browser tests write their screenshots. */
export const OUTPUT = join(import.meta.dirname, '..', '..', 'test-output')

const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
]

/** Throws when Chromium is missing, with how to install it; makes {@link OUTPUT}. */
export function requireChromium(): void {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `Chromium is missing at ${CHROMIUM}: \`npm test\` installs it as root, or run \`${installCommand(['chromium'])}\`. This test does not skip.`,
    )
  }
  mkdirSync(OUTPUT, { recursive: true })
}

/** A running Chromium and the closer that also removes its profile. */
export interface LaunchedChromium {
  readonly context: BrowserContext
  close(): Promise<void>
}

/**
 * Launches Chromium on a fresh profile (playwright passes it as --user-data-dir).
 *
 * @example
 * const browser = await launchChromium({ width: 1000, height: 900 })
 * const page = await browser.context.newPage()
 */
export async function launchChromium(viewport: {
  readonly width: number
  readonly height: number
}): Promise<LaunchedChromium> {
  const profile = mkdtempSync(join(tmpdir(), 'dap-chromium-'))
  const removeProfile = () => rmSync(profile, { recursive: true, force: true })
  let context: BrowserContext
  try {
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: ARGS,
      viewport,
    })
  } catch (error) {
    removeProfile()
    throw error
  }
  return {
    context,
    close: async () => {
      await context.close()
      removeProfile()
    },
  }
}
