/**
 * The OAuth test files' set-up: one reference server per framework on one test clock, started
 * before the file's tests and closed after them.
 */
import { afterAll, beforeAll } from 'vitest'
import { FRAMEWORKS, type Framework } from '../../examples/server/flags.js'
import { type StartedServer, startServer } from '../../examples/server/server.js'
import { oauthSeed, type TestClock, testClock } from './oauth-fixtures.js'

/** One server per framework on one clock. */
async function startOAuthServers(clock: TestClock): Promise<Record<Framework, StartedServer>> {
  const seed = await oauthSeed()
  const servers = await Promise.all(
    FRAMEWORKS.map((framework) =>
      startServer({ seed, framework, host: '127.0.0.1', port: 0, now: clock.read }),
    ),
  )
  return Object.fromEntries(servers.map((server) => [server.framework, server])) as Record<
    Framework,
    StartedServer
  >
}

/** The servers of a test file and the clock they read. */
export interface OAuthHarness {
  /** The clock every server reads; tests move it. */
  readonly clock: TestClock
  /** The origin of the server on `framework`, once `beforeAll` has run. */
  origin(framework: Framework): string
}

/**
 * Registers `beforeAll`/`afterAll` hooks that start and close the servers; call it at the top
 * level of a test file.
 *
 * @example
 * const { clock, origin } = useOAuthServers()
 */
export function useOAuthServers(): OAuthHarness {
  const clock = testClock()
  let servers: Record<Framework, StartedServer>

  beforeAll(async () => {
    servers = await startOAuthServers(clock)
  })

  afterAll(async () => {
    await Promise.all(Object.values(servers ?? {}).map((server) => server.close()))
  })

  return { clock, origin: (framework) => servers[framework].url }
}
