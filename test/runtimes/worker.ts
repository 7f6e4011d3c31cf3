import { getConnInfo } from 'hono/cloudflare-workers'
import { createRuntimeApp } from './app.js'

export default createRuntimeApp('workerd', getConnInfo)
