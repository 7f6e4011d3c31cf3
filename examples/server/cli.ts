/**
 * The command line: flags, seed, start, banner, signals. Exit codes: 0 after `--help` or a clean
 * stop, 2 for a bad flag or seed (one line naming the field and quoting the value), 1 when the
 * server cannot start for another reason (the port is taken, say).
 */

import { ConfigError } from 'data-access-policy'
import { parseCommandLine, USAGE } from './flags.js'
import { readSecretScanningKeys } from './leaks/secret-scanning-keys.js'
import { MCP_PATH } from './mcp/mcp-endpoint.js'
import { DOCS_PATH, OPENAPI_PATH } from './openapi/reference-routes.js'
import { DEMO_SEED, demoBanner } from './seed/demo.js'
import { loadSeed, readSeedFile } from './seed/load.js'
import { type StartedServer, startServer } from './server.js'

/** Where the command line writes. */
export interface Console {
  readonly out: (line: string) => void
  readonly err: (line: string) => void
}

/** The outcome of {@link run}: an exit code now, or a server that runs until stopped. */
export type RunResult = { readonly exitCode: number } | { readonly server: StartedServer }

const PROCESS_CONSOLE: Console = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
}

/**
 * Parses the arguments, loads the seed and starts the server; prints `listening on http://HOST:PORT`
 * once it is ready, then where the API reference is, then (demo seed only) the demo tokens and
 * `curl` lines to try.
 *
 * @example
 * const result = await run(['--framework', 'hono', '--port', '0'])
 */
export async function run(argv: readonly string[], io: Console = PROCESS_CONSOLE): Promise<RunResult> {
  let server: StartedServer
  let demo: boolean
  try {
    const commandLine = parseCommandLine(argv)
    if (commandLine.help) {
      io.out(USAGE)
      return { exitCode: 0 }
    }
    const { flags } = commandLine
    demo = flags.seed === undefined
    const raw = flags.seed === undefined ? DEMO_SEED : await readSeedFile(flags.seed)
    // Read before anything starts: a bad keys file is exit code 2, not a server without its endpoint.
    const secretScanningKeys =
      flags.secretScanningKeys === undefined
        ? undefined
        : await readSecretScanningKeys(flags.secretScanningKeys)
    server = await startServer({
      seed: await loadSeed(raw),
      framework: flags.framework,
      host: flags.host,
      port: flags.port,
      trustProxy: flags.trustProxy,
      store: flags.store,
      publicUrl: flags.publicUrl,
      ipv6Prefix: flags.ipv6Prefix,
      maxTokenLifetimeDays: flags.maxTokenLifetimeDays,
      maxLiveTokens: flags.maxLiveTokens,
      secretScanningKeys,
      clientMetadata: { allowHttpLoopback: flags.clientMetadataAllowHttpLoopback },
      maxRegisteredClients: flags.maxRegisteredClients,
    })
    if (flags.clientMetadataAllowHttpLoopback) {
      io.err(
        'warning: --client-metadata-allow-http-loopback: client metadata documents are fetched from http://127.0.0.1 and http://[::1]; never use it in production',
      )
    }
  } catch (error) {
    if (error instanceof ConfigError) {
      io.err(error.message)
      return { exitCode: 2 }
    }
    const detail = error instanceof Error ? error.message : String(error)
    io.err(`cannot start the server: ${detail}`)
    return { exitCode: 1 }
  }
  io.out(`listening on ${server.url}`)
  io.out(`API reference: ${server.url}${DOCS_PATH} (OpenAPI 3.1: ${server.url}${OPENAPI_PATH})`)
  io.out(`MCP (Streamable HTTP, for AI agents; docs/mcp.md): ${server.url}${MCP_PATH}`)
  if (demo) io.out(demoBanner(server.url))
  return { server }
}

/** Runs the command line in this process: exits on errors, stops cleanly on SIGINT/SIGTERM. */
export async function main(argv: readonly string[]): Promise<void> {
  // Listening before the server starts: a signal that arrives while it starts stops it once up.
  let stopRequested = false
  let server: StartedServer | undefined
  const stop = () => {
    process.off('SIGINT', stop)
    process.off('SIGTERM', stop)
    stopRequested = true
    // Requests in flight finish; a connection that will not close does not hold the process forever.
    setTimeout(() => process.exit(0), 5000).unref()
    server?.close().then(
      () => {
        process.exitCode = 0
      },
      (error: unknown) => {
        PROCESS_CONSOLE.err(`error while stopping: ${error instanceof Error ? error.message : String(error)}`)
        process.exitCode = 1
      },
    )
  }
  process.on('SIGINT', stop)
  process.on('SIGTERM', stop)
  const result = await run(argv)
  if ('exitCode' in result) {
    process.off('SIGINT', stop)
    process.off('SIGTERM', stop)
    process.exitCode = result.exitCode
    return
  }
  server = result.server
  if (stopRequested) {
    await server.close()
    process.exitCode = 0
  }
}
