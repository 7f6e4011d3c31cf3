/**
 * The token-format gate before the store: a value that is not a `dap_`/`dao_` token reaches the
 * store only when the store says it has its own format (`acceptsTokenValue`, a JWT store's); the
 * bearer grammar (RFC 6750 §2.1) still applies first.
 */
import { describe, expect, test } from 'vitest'
import { authenticateRequest } from '../../src/authentication/authenticate.js'
import { generateTokenValue } from '../../src/tokens/token-format.js'
import type { TokenRecord } from '../../src/tokens/token-record.js'
import type { TokenStore } from '../../src/tokens/token-store.js'

const NOW = Date.parse('2026-11-22T12:00:00Z')

function storeAccepting(accepts: ((value: string) => boolean) | undefined) {
  const seen: string[] = []
  const tokens: TokenStore = {
    findByHash: () => undefined,
    findByValue: (value) => {
      seen.push(value)
      return undefined as TokenRecord | undefined
    },
    findById: async () => undefined,
    save: async () => {},
    update: async () => {},
    listByOwner: async () => [],
    touch: async () => {},
    ...(accepts === undefined ? {} : { acceptsTokenValue: accepts }),
  }
  return { tokens, seen }
}

const authenticate = (tokens: TokenStore, header: string) =>
  authenticateRequest({ authorization: [header] }, { tokens, now: () => NOW, storeTimeoutMs: 200 })

describe('a value of another format', () => {
  const jwtLike = 'aGVhZGVy.cGF5bG9hZA.c2ln'

  test.each([
    ['a store without acceptsTokenValue', undefined, []],
    ['a store that refuses the value', () => false, []],
    ['a store that accepts the value', (value: string) => value === jwtLike, [jwtLike]],
  ])('%s: reached %j', async (_name, accepts, reached) => {
    const { tokens, seen } = storeAccepting(accepts)
    const result = await authenticate(tokens, `Bearer ${jwtLike}`)
    expect(!result.ok && result.decision.code).toBe('invalid_token')
    expect(seen).toEqual(reached)
  })

  test('a header that is no b64token is refused before the store is asked', async () => {
    const { tokens, seen } = storeAccepting(() => true)
    const result = await authenticate(tokens, 'Bearer a.b c')
    expect(!result.ok && result.decision.code).toBe('invalid_request')
    expect(seen).toEqual([])
  })

  test("the library's own tokens reach the store without being asked about", async () => {
    const asked: string[] = []
    const { tokens, seen } = storeAccepting((value) => {
      asked.push(value)
      return false
    })
    const value = generateTokenValue('api')
    await authenticate(tokens, `Bearer ${value}`)
    expect(seen).toEqual([value])
    expect(asked).toEqual([])
  })

  test('an acceptsTokenValue that throws is a 503, never an allow', async () => {
    const errors: unknown[] = []
    const { tokens } = storeAccepting(() => {
      throw new Error('broken')
    })
    const result = await authenticateRequest(
      { authorization: ['Bearer a.b.c'] },
      { tokens, now: () => NOW, storeTimeoutMs: 200, onError: (error) => errors.push(error) },
    )
    expect(!result.ok && result.decision.status).toBe(503)
    expect(errors).toHaveLength(1)
  })
})
