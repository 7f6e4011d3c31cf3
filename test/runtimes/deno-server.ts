import { getConnInfo } from 'hono/deno'
import { createRuntimeApp } from './app.js'

const app = createRuntimeApp('deno', getConnInfo)
Deno.serve(
  { port: 0, hostname: '127.0.0.1', onListen: ({ port }) => console.log(JSON.stringify({ port })) },
  app.fetch,
)
