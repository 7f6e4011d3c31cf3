// Adds lock entries for platform-specific optional packages that the registry mirror on these
// machines does not serve (biome's and rollup's binaries for other systems). Without them npm
// records nothing for those packages and `npm ci` refuses the lock as out of sync. The entries carry
// os/cpu/libc, so npm skips them on every platform they are not for; nothing is ever fetched.
// Run after changing dependencies: `npm install && node scripts/complete-lockfile.mjs`.
import { execFileSync } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'

const OS = ['android', 'darwin', 'freebsd', 'linux', 'openbsd', 'openharmony', 'win32', 'sunos', 'aix']
const CPU = ['arm64', 'x64', 'ia32', 'loong64', 'ppc64', 'riscv64', 's390x', 'arm', 'mips64el']

function platformOf(name) {
  const parts = name.split('/').pop().split('-')
  const os = parts.find((part) => OS.includes(part))
  const cpu = parts.find((part) => CPU.includes(part))
  if (os === undefined || cpu === undefined) throw new Error(`cannot tell the platform of ${name}`)
  const entry = { os: [os], cpu: [cpu] }
  if (parts.some((part) => part.startsWith('musl'))) entry.libc = ['musl']
  else if (os === 'linux' && parts.some((part) => part.startsWith('gnu'))) entry.libc = ['glibc']
  return entry
}

const lock = JSON.parse(readFileSync('package-lock.json', 'utf8'))
let added = 0
for (const [path, entry] of Object.entries(lock.packages)) {
  for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const base = path === '' ? 'node_modules' : `${path}/node_modules`
    const candidates = [`${base}/${name}`, `node_modules/${name}`]
    if (candidates.some((candidate) => lock.packages[candidate] !== undefined)) continue
    lock.packages[`node_modules/${name}`] = {
      version,
      ...(entry.dev ? { dev: true } : {}),
      optional: true,
      ...platformOf(name),
    }
    added++
  }
}
writeFileSync('package-lock.json', `${JSON.stringify(lock, null, 2)}\n`)
console.log(`added ${added} platform entries`)
execFileSync('npm', ['ci', '--dry-run', '--ignore-scripts'], { stdio: 'ignore' })
console.log('npm ci accepts the lock')
