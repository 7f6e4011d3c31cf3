/**
 * `npm run soak`: sustained load on the reference server, each framework in a process of its own
 * (server-process.ts), for a bounded time (15 s each by default; `SOAK_SECONDS` changes it). Several
 * keep-alive connections send the demo seed's mixed requests — allowed, 401, 403, 404 and over an
 * export cap — and every answer's status is checked against the one the demo promises. The server's
 * RSS is sampled each second; growth is measured from the end of the warm-up (a quarter of the run)
 * to the end. The figures go into docs/reliability.md between the soak markers; the run fails
 * (exit code 1) on any wrong answer, any 5xx, or RSS growth above 30 %.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { Agent, request } from 'node:http'
import { join } from 'node:path'
import { FRAMEWORKS, type Framework } from '../examples/server/flags.js'
import { DEMO_REQUESTS, DEMO_TOKENS } from '../examples/server/seed/demo.js'
import { type ServerProcess, startServerProcess } from './server-process.js'

const SECONDS = Number(process.env.SOAK_SECONDS ?? 15)
const CONNECTIONS = 8
const MAX_RSS_GROWTH = 0.3
const REPORT = join(import.meta.dirname, '..', 'docs', 'reliability.md')
const START = '<!-- soak:start -->'
const END = '<!-- soak:end -->'

interface Outcome {
  readonly framework: Framework
  readonly requests: number
  readonly byStatus: Readonly<Record<number, number>>
  readonly wrong: number
  readonly serverErrors: number
  readonly rssWarmMb: number
  readonly rssEndMb: number
  readonly growth: number
}

function tokenValue(user: string, name: string): string {
  const token = DEMO_TOKENS.find((each) => each.user === user && each.name === name)
  if (token === undefined) throw new Error(`no demo token ${user}/${name}`)
  return token.value
}

function send(agent: Agent, port: number, index: number): Promise<{ status: number; expected: number }> {
  const demo = DEMO_REQUESTS[index % DEMO_REQUESTS.length]!
  const headers: Record<string, string> = {}
  if (demo.token !== undefined)
    headers.authorization = `Bearer ${tokenValue(demo.token.user, demo.token.name)}`
  if (demo.body !== undefined) {
    headers['content-type'] = 'application/json'
    headers['content-length'] = String(Buffer.byteLength(demo.body))
  }
  return new Promise((resolve, reject) => {
    const outgoing = request(
      { host: '127.0.0.1', port, method: demo.method, path: demo.path, headers, agent },
      (incoming) => {
        incoming.resume()
        incoming.on('error', reject)
        incoming.on('end', () => resolve({ status: incoming.statusCode ?? 0, expected: demo.status }))
      },
    )
    outgoing.on('error', reject)
    outgoing.end(demo.body)
  })
}

const mb = (bytes: number) => bytes / 1024 / 1024

async function soak(framework: Framework): Promise<Outcome> {
  const server: ServerProcess = await startServerProcess(['--framework', framework, '--port', '0'])
  const agent = new Agent({ keepAlive: true, maxSockets: CONNECTIONS })
  const byStatus: Record<number, number> = {}
  let wrong = 0
  let serverErrors = 0
  let requests = 0
  const samples: number[] = []
  const sampler = setInterval(() => samples.push(server.rss()), 1000)
  const deadline = Date.now() + SECONDS * 1000
  try {
    await Promise.all(
      Array.from({ length: CONNECTIONS }, async (_, connection) => {
        for (let i = connection; Date.now() < deadline; i += CONNECTIONS) {
          let answer: { status: number; expected: number }
          try {
            answer = await send(agent, server.port, i)
          } catch {
            answer = { status: 0, expected: -1 }
          }
          requests++
          byStatus[answer.status] = (byStatus[answer.status] ?? 0) + 1
          if (answer.status !== answer.expected) wrong++
          if (answer.status >= 500) serverErrors++
        }
      }),
    )
  } finally {
    clearInterval(sampler)
    agent.destroy()
    samples.push(server.rss())
    await server.stop()
  }
  // The floor of the last samples against the floor of those ending the warm-up: RSS moves with
  // garbage collection, and a floor moves only with what is kept.
  const warmEnd = Math.max(1, Math.floor(samples.length / 4))
  const rssWarm = Math.min(...samples.slice(Math.max(0, warmEnd - 3), warmEnd))
  const rssEnd = Math.min(...samples.slice(-3))
  return {
    framework,
    requests,
    byStatus,
    wrong,
    serverErrors,
    rssWarmMb: mb(rssWarm),
    rssEndMb: mb(rssEnd),
    growth: (rssEnd - rssWarm) / rssWarm,
  }
}

function table(outcomes: readonly Outcome[]): string {
  const rows = outcomes.map((outcome) => {
    const statuses = Object.entries(outcome.byStatus)
      .map(([status, count]) => `${status}: ${count}`)
      .join(', ')
    return `| ${outcome.framework} | ${outcome.requests} | ${statuses} | ${outcome.wrong} | ${outcome.serverErrors} | ${outcome.rssWarmMb.toFixed(1)} → ${outcome.rssEndMb.toFixed(1)} MB (${(outcome.growth * 100).toFixed(1)} %) |`
  })
  return [
    `Last run: ${new Date().toISOString().slice(0, 16)}Z, ${SECONDS} s per framework, ${CONNECTIONS} keep-alive connections, Node ${process.version}.`,
    '',
    '| framework | requests | answers by status | wrong answers | 5xx | RSS after warm-up → end |',
    '|---|---|---|---|---|---|',
    ...rows,
  ].join('\n')
}

const outcomes: Outcome[] = []
for (const framework of FRAMEWORKS) {
  const outcome = await soak(framework)
  outcomes.push(outcome)
  console.log(
    `${framework}: ${outcome.requests} requests, ${outcome.wrong} wrong, ${outcome.serverErrors} 5xx, RSS ${(outcome.growth * 100).toFixed(1)} %`,
  )
}
const report = readFileSync(REPORT, 'utf8')
const start = report.indexOf(START)
const end = report.indexOf(END)
if (start === -1 || end < start) throw new Error(`${REPORT} has no ${START} … ${END} section`)
writeFileSync(REPORT, `${report.slice(0, start + START.length)}\n${table(outcomes)}\n${report.slice(end)}`)
const failed = outcomes.filter(
  (outcome) => outcome.wrong > 0 || outcome.serverErrors > 0 || outcome.growth > MAX_RSS_GROWTH,
)
if (failed.length > 0) {
  console.error(`soak failed on ${failed.map((outcome) => outcome.framework).join(', ')}`)
  process.exitCode = 1
}
