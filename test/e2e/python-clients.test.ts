/**
 * Real third-party clients (issue 28): the Python recipes of docs/oauth.md, run as written with
 * Debian's python3-authlib and python3-requests-oauthlib, against the reference server on Express,
 * Fastify and Hono behind a path prefix — a proxy maps `/dap/…` to the server and forwards the
 * path-inserted `/.well-known/…/dap` locations unchanged, as a deployment's proxy does. The test
 * plays the browser (sign-in and consent through the pages' own forms) between the recipe's
 * authorization URL and the redirect it reads back.
 */
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { createServer, request, type Server } from 'node:http'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { FRAMEWORKS } from '../../examples/server/flags.js'
import { loadSeed } from '../../examples/server/seed/load.js'
import { type StartedServer, startServer } from '../../examples/server/server.js'
import { PYTHON3 } from '../../scripts/test-tools.mjs'
import { listening } from '../adapters/listen.js'
import { PageAgent } from '../server/oauth-agent.js'
import {
  authorizeThroughPages,
  BOB_PASSWORD,
  CLI_REDIRECT,
  CLI_SECRET,
  OAUTH_SEED,
  RS_SECRET,
} from '../server/oauth-fixtures.js'

const PREFIX = '/dap'
// A hang bound only: scrypt, three servers and Python start-ups on a busy machine.
const HANG = 120_000

/** The ```python blocks of docs/oauth.md, by their first line's `# recipe: NAME`. */
function recipes(): ReadonlyMap<string, string> {
  const text = readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'oauth.md'), 'utf8')
  const blocks = [...text.matchAll(/```python\n([\s\S]*?)```/g)].map((match) => match[1]!)
  return new Map(blocks.map((block) => [/^# recipe: (\S+)/.exec(block)?.[1] ?? '', block]))
}

/** A path-prefix proxy: `/dap/x` → the server's `/x`; `/.well-known/…` unchanged. */
async function startProxy(target: () => number) {
  const server: Server = createServer((incoming, outgoing) => {
    const path = incoming.url!.startsWith(`${PREFIX}/`) ? incoming.url!.slice(PREFIX.length) : incoming.url!
    const upstream = request(
      { host: '127.0.0.1', port: target(), method: incoming.method, path, headers: incoming.headers },
      (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers)
        answer.pipe(outgoing)
      },
    )
    upstream.on('error', () => outgoing.writeHead(502).end())
    incoming.pipe(upstream)
  })
  return listening(server.listen(0, '127.0.0.1'))
}

type Run = {
  readonly code: number | null
  readonly summary: Record<string, unknown>
  readonly stderr: string
}

/** Runs a recipe: its first line is the authorization URL, answered with the redirect `answer` gives. */
function runRecipe(
  script: string,
  env: Record<string, string>,
  answer: (authorizationUrl: string) => Promise<string>,
): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(PYTHON3, ['-c', script], { env: { ...process.env, ...env } })
    let stderr = ''
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString()
    })
    const lines: string[] = []
    createInterface({ input: child.stdout }).on('line', (line) => {
      lines.push(line)
      if (lines.length === 1) {
        answer(line).then(
          (callback) => child.stdin.end(`${callback}\n`),
          (error: unknown) => {
            child.kill()
            reject(error)
          },
        )
      }
    })
    child.on('error', reject)
    child.on('close', (code) => {
      const last = lines.at(-1) ?? '{}'
      let summary: Record<string, unknown> = {}
      try {
        summary = JSON.parse(last) as Record<string, unknown>
      } catch {
        // The assertion on `code` and `stderr` says what went wrong.
      }
      resolve({ code, summary, stderr })
    })
  })
}

describe.each(FRAMEWORKS)('Python clients against the reference server on %s, behind /dap', (framework) => {
  let server: StartedServer
  let proxy: { port: number; close: () => Promise<void> }
  let issuer: string

  beforeAll(async () => {
    let port = 0
    proxy = await startProxy(() => port)
    issuer = `http://127.0.0.1:${proxy.port}${PREFIX}`
    server = await startServer({
      seed: await loadSeed(OAUTH_SEED),
      framework,
      host: '127.0.0.1',
      port: 0,
      publicUrl: issuer,
    })
    port = server.port
  }, HANG)

  afterAll(async () => {
    await server?.close()
    await proxy?.close()
  })

  const env = () => ({
    DAP_ISSUER: issuer,
    DAP_CLIENT_ID: 'cli',
    DAP_CLIENT_SECRET: CLI_SECRET,
    DAP_REDIRECT_URI: CLI_REDIRECT,
    DAP_RS_ID: 'rs',
    DAP_RS_SECRET: RS_SECRET,
    DAP_API_URL: `${issuer}/api/v1/datasets/acme/claims/metadata`,
    AUTHLIB_INSECURE_TRANSPORT: '1',
    OAUTHLIB_INSECURE_TRANSPORT: '1',
  })

  // The browser's part: the authorization URL names the issuer's public path, and the pages'
  // forms and redirects stay under it (`/dap/signin`, `/dap/oauth/consent`), through the proxy.
  const approve = async (authorizationUrl: string) => {
    const url = new URL(authorizationUrl)
    expect(url.pathname).toBe(`${PREFIX}/oauth/authorize`)
    const { callback } = await authorizeThroughPages(new PageAgent(url.origin), authorizationUrl, {
      handle: 'bob',
      password: BOB_PASSWORD,
    })
    return callback.toString()
  }

  test(
    'authlib: discovery from the path-prefixed issuer, code + PKCE with resource and iss checked, no widening at refresh, refresh with rotation, introspection with aud, revocation',
    async () => {
      const run = await runRecipe(recipes().get('authlib')!, env(), approve)
      expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' })
      expect(run.summary).toMatchObject({
        first_call: 200,
        widened: 'invalid_target',
        rotated: true,
        active: {
          active: true,
          scope: 'public data.metadata',
          client_id: 'cli',
          sub: 'bob',
          username: 'bob',
          token_type: 'Bearer',
          aud: `${issuer}/api/v1`,
        },
        revoked: 200,
        after: { active: false },
        last_call: 401,
      })
    },
    HANG,
  )

  test(
    'requests-oauthlib: code + PKCE, a call, a refresh',
    async () => {
      const run = await runRecipe(recipes().get('requests-oauthlib')!, env(), approve)
      expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' })
      expect(run.summary).toEqual({ first_call: 200, after_refresh: 200 })
    },
    HANG,
  )
})
