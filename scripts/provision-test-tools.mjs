// The first step of `npm test`: makes sure redis-server, Chromium and the Python OAuth clients
// (python3-authlib, python3-requests-oauthlib) are installed, so that the
// README's two commands are all the set-up a fresh Debian machine needs. As root it installs what
// is missing through apt; otherwise it stops at once with one line naming the command to run.
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { installCommand, missingTestTools } from './test-tools.mjs'

const missing = missingTestTools()
if (missing.length > 0) {
  const command = installCommand(missing)
  const isRoot = process.getuid?.() === 0
  if (!isRoot || !existsSync('/usr/bin/apt-get')) {
    const sudo = isRoot ? '' : 'sudo '
    console.error(
      `npm test needs ${missing.join(' and ')}: run \`${sudo}apt-get update && ${sudo}${command}\`, then npm test again`,
    )
    process.exit(1)
  }
  console.error(
    `npm test: installing ${missing.join(' and ')} for the Redis, browser and client tests (apt-get)`,
  )
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }
  for (const step of ['apt-get update', command]) {
    const [program, ...args] = step.split(' ')
    const run = spawnSync(program, args, { stdio: ['ignore', 'inherit', 'inherit'], env })
    if (run.status !== 0) {
      console.error(
        `npm test: \`${step}\` failed; run \`apt-get update && ${command}\` by hand, then npm test again`,
      )
      process.exit(1)
    }
  }
  const still = missingTestTools()
  if (still.length > 0) {
    console.error(`npm test: ${still.join(' and ')} still missing after \`${command}\``)
    process.exit(1)
  }
}
