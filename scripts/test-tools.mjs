// The programs outside npm that the test suite runs, in one place: the provisioning step of
// `npm test` installs them and the tests that use them (test/adapters/redis/redis-server.ts,
// test/browser/chromium.ts) look them up here.
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'

/** Debian's Chromium, which playwright-core drives (nothing is downloaded at test time). */
export const CHROMIUM = '/usr/bin/chromium'

/** The Redis server the Redis tests start privately, looked up on PATH. */
export const REDIS_SERVER = 'redis-server'

/**
 * Debian's Python, for the OAuth client tests with python3-authlib and python3-requests-oauthlib
 * (test/e2e/python-clients.test.ts): by its path, so that a pyenv or venv first on PATH, without
 * Debian's packages, is not the one run.
 */
export const PYTHON3 = '/usr/bin/python3'

// Each Debian package the Python client tests import, with the module that proves it installed.
const PYTHON_PACKAGES = [
  ['python3-authlib', 'authlib'],
  ['python3-requests-oauthlib', 'requests_oauthlib'],
]

/** What installs every missing tool on Debian (and what a non-root user is told to run). */
export function installCommand(packages) {
  return `apt-get install -y --no-install-recommends ${packages.join(' ')}`
}

/** The Debian packages of the tools this machine lacks, in install order. */
export function missingTestTools() {
  const missing = []
  if (spawnSync(REDIS_SERVER, ['--version'], { stdio: 'ignore' }).error !== undefined) {
    missing.push('redis-server')
  }
  if (!existsSync(CHROMIUM)) missing.push('chromium')
  for (const [pkg, module] of PYTHON_PACKAGES) {
    if (spawnSync(PYTHON3, ['-c', `import ${module}`], { stdio: 'ignore' }).status !== 0) missing.push(pkg)
  }
  return missing
}
