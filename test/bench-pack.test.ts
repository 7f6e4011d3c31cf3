import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { corePlan, parseBenchArgs } from '../bench/options.js'
import { BENCH_DEPENDENCIES, benchManifest, runScript } from '../bench/pack.js'
import { renderTargets } from '../bench/targets.js'

const root = join(import.meta.dirname, '..')
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))

// docs/performance.md promises a folder that runs offline and without Redis, and a server alone on
// its core with the load on four others from 6 cores up.
describe('the self-contained bench folder', () => {
  test('its package.json pins the packed package and each bench dependency as package.json does', () => {
    const folder = benchManifest(manifest, 'data-access-policy-0.1.0.tgz')
    expect(folder.dependencies['data-access-policy']).toBe('file:./data-access-policy-0.1.0.tgz')
    for (const name of BENCH_DEPENDENCIES) {
      expect(folder.dependencies[name]).toBe(manifest.devDependencies[name] ?? manifest.dependencies[name])
    }
    expect(Object.keys(folder.dependencies)).toHaveLength(BENCH_DEPENDENCIES.length + 1)
  })

  test('a dependency without one exact version is refused, by name', () => {
    const loose = { ...manifest, devDependencies: { ...manifest.devDependencies, hono: '^4.0.0' } }
    expect(() => benchManifest(loose, 'x.tgz')).toThrow('the bench needs hono at one exact version')
    const { casbin: _, ...without } = manifest.devDependencies
    expect(() => benchManifest({ ...manifest, devDependencies: without }, 'x.tgz')).toThrow(
      'casbin at one exact version; package.json has none',
    )
  })

  test('every package the bench imports is installed there (Redis only behind --no-redis)', () => {
    const imported = new Set<string>()
    for (const file of readdirSync(join(root, 'bench')).filter((name) => name.endsWith('.ts'))) {
      if (file === 'redis.ts') continue
      const source = readFileSync(join(root, 'bench', file), 'utf8')
      // Package names only: `require('dataset.metadata', …)` is the library's guard, not a module.
      for (const [, specifier] of source.matchAll(
        /(?:from|import\(|require\()\s*'((?:@[a-z0-9-]+\/)?[a-z0-9-]+(?:\/[^']*)?)'/g,
      )) {
        const parts = specifier!.split('/')
        const name = specifier!.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!
        if (!name.startsWith('node:') && name !== 'data-access-policy') imported.add(name)
      }
    }
    expect([...imported].sort()).toEqual(BENCH_DEPENDENCIES.filter((name) => name !== 'tsx'))
  })

  test('run.sh runs the bench with the folder’s own Node, without Redis, writing the page beside it', () => {
    const script = runScript()
    expect(script.startsWith('#!/bin/sh\n')).toBe(true)
    expect(script).toContain('cd "$(dirname "$0")"')
    expect(script).toContain(
      'TSX_TSCONFIG_PATH=bench/tsconfig.json exec ./node --import tsx bench/run.ts --no-redis --out performance.md --targets targets.json "$@"',
    )
    expect(parseBenchArgs(['--no-redis', '--out', 'performance.md', '--quick'])).toEqual({
      quick: true,
      inProcess: false,
      redis: false,
      out: 'performance.md',
    })
  })
})

describe('the bench command line', () => {
  test.each([
    [[], { quick: false, inProcess: false, redis: true }],
    [['--in-process'], { quick: false, inProcess: true, redis: true }],
    [['--pack', '/tmp/b'], { quick: false, inProcess: false, redis: true, pack: '/tmp/b' }],
  ])('%j', (argv, expected) => {
    expect(parseBenchArgs(argv)).toEqual(expected)
  })

  test.each([
    [['--fast'], 'unknown flag "--fast"'],
    [['--pack'], '--pack needs a value'],
    [['--out', '--quick'], '--out needs a value'],
  ])('%j is refused', (argv, message) => {
    expect(() => parseBenchArgs(argv)).toThrow(message)
  })
})

describe('where the HTTP bench runs its processes', () => {
  test.each([
    [1, undefined],
    [2, { server: '1', load: '0' }],
    [3, { server: '2', load: '0-1' }],
    [5, { server: '4', load: '0-3' }],
    // From 6 cores: the server alone, the load on the four cores before it, core 0 left over.
    [6, { server: '5', load: '1-4' }],
    [16, { server: '15', load: '11-14' }],
    [Number.NaN, undefined],
  ])('%d cores: %j', (cores, plan) => {
    expect(corePlan(cores)).toEqual(plan)
  })
})

describe('the Targets table', () => {
  const quiet = {
    machine: 'Xeon (16 cores, 64 GiB)',
    node: 'v20.20.2',
    date: '2026-11-27',
    targets: [
      ['decide ≤ 1.5× the floor', '1.20×', true],
      ['guard − floor ≤ 1 µs', '+0.8 µs ± 0.2', true],
    ] as const,
  }
  const shared = {
    machine: 'EPYC (2 cores, 24 GiB)',
    node: 'v20.20.2',
    date: '2026-11-26',
    targets: [['decide ≤ 1.5× the floor', '4.42×', false]] as const,
  }

  test('one run: each target with its figures and verdict', () => {
    expect(renderTargets([quiet]).split('\n')).toEqual([
      '| target | Xeon (16 cores, 64 GiB), Node v20.20.2, 2026-11-27 | |',
      '| --- | --- | --- |',
      '| decide ≤ 1.5× the floor | 1.20× | ✅ met |',
      '| guard − floor ≤ 1 µs | +0.8 µs ± 0.2 | ✅ met |',
    ])
  })

  test('another run beside it, matched by target; one it lacks reads —', () => {
    expect(renderTargets([quiet, shared]).split('\n')).toEqual([
      '| target | Xeon (16 cores, 64 GiB), Node v20.20.2, 2026-11-27 | | EPYC (2 cores, 24 GiB), Node v20.20.2, 2026-11-26 | |',
      '| --- | --- | --- | --- | --- |',
      '| decide ≤ 1.5× the floor | 1.20× | ✅ met | 4.42× | ❌ missed |',
      '| guard − floor ≤ 1 µs | +0.8 µs ± 0.2 | ✅ met | — | |',
    ])
  })

  test('--targets and --beside take a file each', () => {
    expect(parseBenchArgs(['--targets', 'a.json', '--beside', 'b.json'])).toMatchObject({
      targets: 'a.json',
      beside: 'b.json',
    })
  })
})
