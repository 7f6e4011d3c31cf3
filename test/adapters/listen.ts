import type { Server } from 'node:http'
import { request } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { DataChunk } from '../../adapters/shared/data-response.js'
import { MemoryTokenStore } from '../../src/tokens/memory-token-store.js'
import { createApiToken } from '../../src/tokens/token-record.js'
import type { TokenStore } from '../../src/tokens/token-store.js'

/**
 * Waits until a Node server listens and returns its port and a closer.
 *
 * @example
 * const { port, close } = await listening(app.listen(0, '127.0.0.1'))
 */
export async function listening(server: Server): Promise<{ port: number; close: () => Promise<void> }> {
  if (!server.listening) {
    await new Promise((resolve, reject) => server.once('listening', resolve).once('error', reject))
  }
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      }),
  }
}

/** A memory store holding one `data.edit` token of alice, counting its lookups. */
export async function storeWithToken(): Promise<{ store: TokenStore; token: string; lookups: () => number }> {
  const memory = new MemoryTokenStore()
  const { record, value } = createApiToken({
    userId: 'alice',
    name: 't',
    scopes: 'data.edit',
    now: Date.now() - 1000,
  })
  await memory.save(record)
  let count = 0
  const store: TokenStore = {
    findByHash: (hash) => {
      count++
      return memory.findByHash(hash)
    },
    findById: (id) => memory.findById(id),
    save: (r) => memory.save(r),
    update: (r) => memory.update(r),
    listByOwner: (userId) => memory.listByOwner(userId),
    touch: (id, now) => memory.touch(id, now),
  }
  return { store, token: value, lookups: () => count }
}

/** An endless stream that records when its consumer closes it. */
export function endlessChunks(): { chunks: AsyncGenerator<DataChunk>; closed: Promise<void> } {
  let markClosed: () => void = () => {}
  const closed = new Promise<void>((resolve) => {
    markClosed = resolve
  })
  async function* generate(): AsyncGenerator<DataChunk> {
    try {
      for (;;) {
        await new Promise((resolve) => setTimeout(resolve, 2))
        yield { data: 'x'.repeat(1024), records: 1 }
      }
    } finally {
      markClosed()
    }
  }
  return { chunks: generate(), closed }
}

/**
 * Reads the first body bytes of a response, then hangs up, as a client that goes away would.
 *
 * @example
 * await hangUpAfterFirstBytes(port, '/stream', { authorization: 'Bearer …' })
 */
export function hangUpAfterFirstBytes(
  port: number,
  path: string,
  headers: Record<string, string>,
): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers, agent: false }, (res) => {
      res.once('data', () => {
        req.destroy()
        resolve(res.statusCode ?? 0)
      })
    })
    req.on('error', () => {})
    req.once('close', () => reject(new Error('closed before any body byte')))
    req.end()
  })
}
