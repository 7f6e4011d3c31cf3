import { getConnInfo } from 'hono/bun'
import { createRuntimeApp } from './app.js'

const app = createRuntimeApp('bun', getConnInfo)
const server = Bun.serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' })
console.log(JSON.stringify({ port: server.port }))
