// `npm run bench -- --pack DIR`: the bench as a folder that runs on any Linux machine with the same
// architecture, offline and without Redis: this Node binary, the package as `npm pack` makes it, the
// bench's sources (and the src/ modules they measure directly), and its dependencies installed.
// `DIR/run.sh` runs it and writes DIR/performance.md.

import { execFileSync } from 'node:child_process'
import {
  chmodSync,
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  writeFileSync,
} from 'node:fs'
import { join } from 'node:path'

const ROOT = join(import.meta.dirname, '..')

/**
 * What the bench imports besides Node and the package itself, at the versions this checkout pins.
 * test/bench-pack.test.ts checks that every bare import of bench/ is here (Redis's only behind
 * `--no-redis`, which the folder always passes).
 */
export const BENCH_DEPENDENCIES = [
  '@casl/ability',
  '@cedar-policy/cedar-wasm',
  '@fastify/bearer-auth',
  '@hono/node-server',
  '@noble/hashes',
  'autocannon',
  'casbin',
  'express',
  'fastify',
  'hono',
  'jose',
  'tsx',
] as const

interface Manifest {
  readonly name: string
  readonly version: string
  readonly dependencies?: Readonly<Record<string, string>>
  readonly devDependencies?: Readonly<Record<string, string>>
}

/**
 * The folder's package.json: the packed package and every bench dependency at the exact version
 * the checkout's package.json pins.
 *
 * @throws Error naming a dependency the checkout does not pin to one exact version.
 * @example
 * benchManifest(JSON.parse(readFileSync('package.json', 'utf8')), 'data-access-policy-0.1.0.tgz')
 */
export function benchManifest(manifest: Manifest, tarball: string) {
  const pinned = { ...manifest.devDependencies, ...manifest.dependencies }
  const dependencies: Record<string, string> = { [manifest.name]: `file:./${tarball}` }
  for (const name of BENCH_DEPENDENCIES) {
    const version = pinned[name]
    if (version === undefined || !/^\d+\.\d+\.\d+$/.test(version)) {
      throw new Error(`the bench needs ${name} at one exact version; package.json has ${version ?? 'none'}`)
    }
    dependencies[name] = version
  }
  return { name: 'data-access-policy-bench', private: true, type: 'module', dependencies }
}

/** DIR/run.sh: the folder's own Node runs the bench from the folder, flags passed through. */
export function runScript(): string {
  return `#!/bin/sh
# The bench of data-access-policy, self-contained (written by \`npm run bench -- --pack DIR\`).
# ./run.sh [--quick] [--in-process]: writes performance.md and targets.json here; no network, no Redis.
set -e
cd "$(dirname "$0")"
PATH="$PWD:$PATH" TSX_TSCONFIG_PATH=bench/tsconfig.json exec ./node --import tsx bench/run.ts --no-redis --out performance.md --targets targets.json "$@"
`
}

/** Writes the folder to `dir`, which must not exist or be empty. */
export async function writeBenchFolder(dir: string, log: (line: string) => void): Promise<void> {
  if (existsSync(dir) && readdirSync(dir).length > 0) throw new Error(`${dir} is not empty`)
  mkdirSync(dir, { recursive: true })
  log(`packing the package into ${dir} …`)
  const [packed] = JSON.parse(
    execFileSync('npm', ['pack', '--json', '--pack-destination', dir], { cwd: ROOT, encoding: 'utf8' }),
  ) as { filename: string }[]
  const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as Manifest
  writeFileSync(
    join(dir, 'package.json'),
    `${JSON.stringify(benchManifest(manifest, packed!.filename), null, 2)}\n`,
  )
  // The bench's sources, the src/ modules it measures directly, and the configs tsx reads.
  for (const folder of ['bench', 'src']) cpSync(join(ROOT, folder), join(dir, folder), { recursive: true })
  copyFileSync(join(ROOT, 'tsconfig.json'), join(dir, 'tsconfig.json'))
  copyFileSync(process.execPath, join(dir, 'node'))
  writeFileSync(join(dir, 'run.sh'), runScript())
  chmodSync(join(dir, 'run.sh'), 0o755)
  log('installing the bench dependencies (from the npm cache where it has them) …')
  execFileSync('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund'], {
    cwd: dir,
    stdio: 'inherit',
  })
  log(`done: copy ${dir} to the machine and run ${join(dir, 'run.sh')}`)
}
