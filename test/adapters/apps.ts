import { startExpressApp } from './express-app.js'
import { startFastifyApp } from './fastify-app.js'
import type { Fixture } from './fixture.js'
import { startHonoApp } from './hono-app.js'
import type { Framework, RunningApp } from './running-app.js'

const STARTERS: Readonly<Record<Framework, typeof startExpressApp>> = {
  express: startExpressApp,
  fastify: startFastifyApp,
  hono: startHonoApp,
}

/**
 * Starts the adapters' test app on a framework; `trustProxy` is `false` or what the app trusts.
 *
 * @example
 * const app = await startApp('hono', fixture, '127.0.0.1')
 */
export function startApp(
  framework: Framework,
  fixture: Fixture,
  trustProxy: string | false,
): Promise<RunningApp> {
  return STARTERS[framework](fixture, trustProxy)
}
