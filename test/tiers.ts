/**
 * The test tiers, named by what their files need, and the rule that puts a test file in one.
 * Membership follows paths, never a list of files: a file lands in the first tier whose patterns
 * match it, and in `unit` when none does. Any file can opt into a tier by its name,
 * `<name>.<tier>.test.ts` (`x.redis.test.ts`, `x.server.test.ts`…), and test/tiers.test.ts fails
 * when a file's imports need more than its tier provides. Patterns use `*` and `**` only.
 */

/** The tiers' names, also their vitest project names (`vitest run --project <name>`). */
export type TierName = 'timing' | 'browser' | 'runtimes' | 'tools' | 'redis' | 'server' | 'unit'

/** What a test file can need beyond Node and the project's own modules. */
export type Need = 'server' | 'redis' | 'browser' | 'runtimes' | 'programs'

/** A tier of the suite: what its files may need, and the paths that put a file in it. */
export interface Tier {
  readonly name: TierName
  /** In words, for the README and a failing test/tiers.test.ts. */
  readonly needs: string
  readonly provides: readonly Need[]
  readonly include: readonly string[]
}

const named = (tier: TierName) => `test/**/*.${tier}.test.ts`

/**
 * Set (to `1`) by `npm run test:loaded` and `npm run test:timing`: only then is the `timing` tier,
 * whose tests judge wall-clock time, part of a run.
 */
export const TIMING_ENV = 'DAP_TEST_TIMING'

/**
 * The tiers in precedence order: a file belongs to the first one that matches it. `unit` is last
 * and matches every test file, so it holds whatever no other tier claims.
 *
 * @example
 * TIERS.at(-1)?.name // 'unit'
 */
export const TIERS: readonly Tier[] = [
  {
    name: 'timing',
    needs: 'a machine whose speed the test judges: run by `npm run test:loaded`, never by `npm test`',
    provides: ['server', 'redis', 'browser', 'runtimes', 'programs'],
    include: [named('timing')],
  },
  {
    name: 'browser',
    needs: 'Chromium (/usr/bin/chromium), the reference server it drives and its Redis store',
    provides: ['server', 'redis', 'browser', 'programs'],
    include: ['test/browser/**/*.test.ts', named('browser')],
  },
  {
    name: 'runtimes',
    needs: 'Bun, Deno and workerd (from node_modules) and the build (`npm run build`)',
    provides: ['runtimes', 'programs'],
    include: ['test/runtimes/**/*.test.ts', named('runtimes')],
  },
  {
    name: 'tools',
    needs:
      'programs the tests run: git (the scanner reads histories), npm and the build (the package is packed and installed), typedoc',
    provides: ['programs'],
    include: ['test/package.test.ts', 'test/api-docs.test.ts', 'test/cli-scan*.test.ts', named('tools')],
  },
  {
    name: 'redis',
    needs: 'redis-server (each file starts its own), some with the reference server',
    provides: ['server', 'redis', 'programs'],
    include: ['test/adapters/redis/**/*.test.ts', 'test/**/redis-*.test.ts', named('redis')],
  },
  {
    name: 'server',
    needs:
      'the reference server over HTTP, in process or as a process of its own; test/e2e also the Python OAuth clients',
    provides: ['server', 'programs'],
    include: [
      'test/server/**/*.test.ts',
      'test/conformance/**/*.test.ts',
      'test/e2e/**/*.test.ts',
      named('server'),
    ],
  },
  {
    name: 'unit',
    needs: 'nothing but Node: the pure core, the adapters on in-process requests, the CLI',
    provides: [],
    include: ['test/**/*.test.ts'],
  },
]

/**
 * The tiers a run includes: all but `timing`, unless the environment asks for it.
 *
 * @example
 * tiersToRun({}).some((tier) => tier.name === 'timing') // false
 */
export function tiersToRun(env: Readonly<Record<string, string | undefined>>): readonly Tier[] {
  return TIERS.filter((tier) => tier.name !== 'timing' || env[TIMING_ENV] === '1')
}

/**
 * The patterns that keep a tier's files out of it because an earlier tier claims them.
 *
 * @example
 * claimedBefore('unit').includes('test/server/**\/*.test.ts') // true
 */
export function claimedBefore(name: TierName): string[] {
  const index = TIERS.findIndex((tier) => tier.name === name)
  return TIERS.slice(0, index).flatMap((tier) => tier.include)
}

// A pattern as a regular expression: `**/` is any number of folders, `*` any name part.
function patternRegExp(pattern: string): RegExp {
  const source = pattern
    .split('**/')
    .map((part) =>
      part
        .split('*')
        .map((text) => text.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
        .join('[^/]*'),
    )
    .join('(?:[^/]+/)*')
  return new RegExp(`^${source}$`)
}

/**
 * The tier of a test file (a path relative to the repository root, with `/`).
 *
 * @example
 * tierOf('test/server/abuse-limits.redis.test.ts').name // 'redis'
 */
export function tierOf(file: string): Tier {
  const tier = TIERS.find((each) => each.include.some((pattern) => patternRegExp(pattern).test(file)))
  if (tier === undefined) throw new Error(`${file} is not a test file (test/**/*.test.ts)`)
  return tier
}
