import { type ChildProcess, execFile, spawn } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, describe, expect, test } from 'vitest'
import { type Console, run } from '../../examples/server/cli.js'
import { FRAMEWORKS } from '../../examples/server/flags.js'

const ROOT = join(import.meta.dirname, '..', '..')
const MAIN = join(ROOT, 'examples', 'server', 'main.ts')
const directory = mkdtempSync(join(tmpdir(), 'dap-server-'))
const execFileAsync = promisify(execFile)

function seedFile(name: string, seed: unknown): string {
  const file = join(directory, name)
  writeFileSync(file, typeof seed === 'string' ? seed : JSON.stringify(seed))
  return file
}

const MINIMAL_SEED = {
  users: [{ handle: 'alice', password: 'pw' }],
  organizations: [],
  datasets: [{ owner: 'alice', name: 'open', publicLevel: 'data' }],
  tokens: [{ user: 'alice', name: 'ci', scopes: [], value: 'dap_9dzMtUcaWCDPen7A6qZ22SWPZrBH2Tke23VPIp' }],
}

interface Exited {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

function runMain(args: readonly string[]): Promise<Exited> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', MAIN, ...args], { cwd: ROOT })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk) => (stdout += chunk))
    child.stderr.on('data', (chunk) => (stderr += chunk))
    child.on('close', (code) => resolve({ code, stdout, stderr }))
  })
}

const children = new Set<ChildProcess>()
afterAll(() => {
  for (const child of children) signalGroup(child, 'SIGKILL')
})

// Signals the child's whole process group, as Ctrl-C in a terminal does: `npm start` runs the
// server two processes down (npm → sh → tsx → node), and only the group reaches all of them.
function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    process.kill(-child.pid!, signal)
  } catch {
    // Already gone.
  }
}

// Starts the real command in its own process group and waits until `ready` matches its output.
function startMain(command: string, args: readonly string[], ready: RegExp) {
  const child = spawn(command, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], detached: true })
  children.add(child)
  let stdout = ''
  let stderr = ''
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)))
  const output = new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (chunk) => {
      stdout += chunk
      if (ready.test(stdout)) resolve(stdout)
    })
    child.stderr.on('data', (chunk) => (stderr += chunk))
    exited.then((code) => reject(new Error(`exited with ${code}: ${stderr}`)))
  })
  return { child, output, exited }
}

const BANNER_END = /# 404: [^\n]*\n\s+curl [^\n]*\n/

describe('npm start (child processes)', () => {
  test.each(FRAMEWORKS)(
    'on %s: prints "listening on", the demo tokens and curl lines that behave as printed; SIGTERM stops it',
    async (framework) => {
      const { child, output, exited } = startMain(
        process.execPath,
        ['--import', 'tsx', MAIN, '--framework', framework, '--port', '0'],
        BANNER_END,
      )
      const stdout = await output
      const lines = stdout.split('\n')
      expect(lines[0]).toMatch(/^listening on http:\/\/127\.0\.0\.1:\d+$/)
      const url = lines[0]!.slice('listening on '.length)
      expect(lines[1]).toBe(`API reference: ${url}/docs (OpenAPI 3.1: ${url}/openapi.json)`)
      expect(lines[2]).toBe(`MCP (Streamable HTTP, for AI agents; docs/mcp.md): ${url}/mcp`)
      expect((await fetch(`${url}/docs`)).status).toBe(200)
      expect(stdout).toContain('Demo tokens')
      expect(stdout).toMatch(/dap_[0-9A-Za-z]{38}/)

      const examples = lines.flatMap((line, i) => {
        const title = /^\s+# (\d{3}): /.exec(line)
        const command = lines[i + 1]?.trim()
        return title && command?.startsWith('curl ') ? [{ status: Number(title[1]), command }] : []
      })
      expect(new Set(examples.map((example) => example.status))).toEqual(new Set([200, 401, 403, 404]))
      for (const example of examples) {
        // The printed line, run by a shell exactly as a reader would paste it.
        const { stdout: response } = await execFileAsync('sh', ['-c', `${example.command} -sS`])
        expect(response.split('\r\n')[0], example.command).toMatch(
          new RegExp(`^HTTP/1\\.1 ${example.status} `),
        )
      }

      signalGroup(child, 'SIGTERM')
      expect(await exited).toBe(0)
    },
  )

  test('`npm start -- --port 0` serves the demo', async () => {
    const { child, output, exited } = startMain('npm', ['start', '--silent', '--', '--port', '0'], BANNER_END)
    const stdout = await output
    const url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(stdout)![1]!
    const response = await fetch(`${url}/api/v1/datasets/acme/weather`, {
      headers: { authorization: 'Bearer dap_1mLrl1Eb3mcxHhCXjX2cdu1hTB7j9dw43kHZYP' },
    })
    expect(response.status).toBe(200)
    signalGroup(child, 'SIGINT')
    // npm re-raises the signal on itself, so its own exit code is not the server's; the server is
    // gone once npm is: nothing answers on its port any more.
    await exited
    await expect(fetch(`${url}/api/v1/datasets/acme/weather`)).rejects.toThrow()
  })

  test.each([
    [['--port', 'abc'], '--port: "abc" is not a port number from 0 to 65535'],
    [['--ipv6-prefix', '129'], '--ipv6-prefix: "129" is not a prefix length from 1 to 128'],
    [['--framework', 'koa'], '--framework: "koa" is not one of express, fastify, hono'],
    [
      ['--trust-proxy', '0.0.0.0/0,::/0'],
      '--trust-proxy: "0.0.0.0/0" has a prefix of length 0: like "true", it would let any client forge its address; name the proxies: loopback, or addresses/CIDRs separated by commas',
    ],
    [
      [
        '--seed',
        seedFile('host-bits.json', {
          ...MINIMAL_SEED,
          datasets: [{ ...MINIMAL_SEED.datasets[0], exportRestrictions: { allowedIps: ['10.1.2.77/24'] } }],
        }),
      ],
      'datasets[0].exportRestrictions.allowedIps[0]: "10.1.2.77/24" has host bits set; did you mean 10.1.2.0/24?',
    ],
  ])('%j exits with 2 and one line', async (args, line) => {
    // Each fails before listening, so the default port is never bound.
    const { code, stdout, stderr } = await runMain(args)
    expect(code).toBe(2)
    expect(stdout).toBe('')
    expect(stderr).toBe(`${line}\n`)
  })
})

describe('run (in process)', () => {
  function capture(): Console & { readonly out_: string[]; readonly err_: string[] } {
    const out_: string[] = []
    const err_: string[] = []
    return { out: (line) => out_.push(line), err: (line) => err_.push(line), out_, err_ }
  }

  test('--help prints the usage and exits 0', async () => {
    const io = capture()
    expect(await run(['--help'], io)).toEqual({ exitCode: 0 })
    expect(io.out_.join('\n')).toContain('--trust-proxy VALUE')
  })

  test('a seed file: prints only the address and the API reference, no demo tokens', async () => {
    const io = capture()
    const result = await run(
      ['--seed', seedFile('minimal.json', MINIMAL_SEED), '--port', '0', '--framework', 'hono'],
      io,
    )
    if (!('server' in result)) throw new Error(io.err_.join('\n'))
    try {
      const url = result.server.url
      expect(io.out_).toEqual([
        `listening on ${url}`,
        `API reference: ${url}/docs (OpenAPI 3.1: ${url}/openapi.json)`,
        `MCP (Streamable HTTP, for AI agents; docs/mcp.md): ${url}/mcp`,
      ])
      const response = await fetch(`${result.server.url}/api/v1/users/alice/datasets`, {
        headers: { authorization: `Bearer ${MINIMAL_SEED.tokens[0]!.value}` },
      })
      expect(await response.json()).toEqual({
        results: [{ owner: 'alice', name: 'open', description: '', publicLevel: 'data' }],
        nextPageToken: null,
      })
    } finally {
      await result.server.close()
    }
  })

  test.each([
    [
      'a missing file',
      ['--seed', join(directory, 'missing.json')],
      /^--seed: cannot read ".*missing\.json" \(ENOENT\)$/,
    ],
    [
      'a file that is not JSON',
      ['--seed', seedFile('broken.json', '{"users": [')],
      /^--seed: ".*broken\.json" is not valid JSON: /,
    ],
  ])('%s exits with 2', async (_title, args, line) => {
    const io = capture()
    expect(await run(args, io)).toEqual({ exitCode: 2 })
    expect(io.err_).toHaveLength(1)
    expect(io.err_[0]).toMatch(line)
  })

  test('a port already in use exits with 1', async () => {
    const io = capture()
    const first = await run(['--port', '0'], capture())
    if (!('server' in first)) throw new Error('the first server did not start')
    try {
      expect(await run(['--port', String(first.server.port)], io)).toEqual({ exitCode: 1 })
      expect(io.err_).toEqual([expect.stringMatching(/^cannot start the server: .*EADDRINUSE/)])
    } finally {
      await first.server.close()
    }
  })
})
