import { FRAMEWORKS, type Framework } from '../../examples/server/flags.js'
import type { TrustProxy } from '../../examples/server/http/trust-proxy.js'
import type { Seed } from '../../examples/server/seed/load.js'
import { type StartedServer, startServer } from '../../examples/server/server.js'

/**
 * The origin every conformance server is told it has (`--public-url`): absolute URLs in answers
 * (metadata, the 401 challenges' `resource_metadata`) are then the same on every framework,
 * whatever port each listens on.
 */
export const CONFORMANCE_PUBLIC_URL = 'https://data.example.org'

/** One reference server per framework, each with its own copy of the data, on ephemeral ports. */
export async function startAll(
  seed: Seed,
  trustProxy: TrustProxy = false,
): Promise<Record<Framework, StartedServer>> {
  const servers = await Promise.all(
    FRAMEWORKS.map((framework) =>
      startServer({
        seed,
        framework,
        host: '127.0.0.1',
        port: 0,
        trustProxy,
        publicUrl: CONFORMANCE_PUBLIC_URL,
      }),
    ),
  )
  return Object.fromEntries(servers.map((server) => [server.framework, server])) as Record<
    Framework,
    StartedServer
  >
}

export async function closeAll(servers: Partial<Record<Framework, StartedServer>>): Promise<void> {
  await Promise.all(Object.values(servers).map((server) => server?.close()))
}
