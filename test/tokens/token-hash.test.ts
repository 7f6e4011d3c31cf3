import { createHash } from 'node:crypto'
import fc from 'fast-check'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { ConfigError, InvalidArgumentError } from '../../src/errors.js'
import { hashTokenValue, hashTokenValueAsync, tokenHashBackend } from '../../src/tokens/token-hash.js'

// SHA-256 vectors: '' and 'abc' are FIPS 180-2 (Appendix B.1) / NIST examples; the others were computed
// outside this library with Python's hashlib.sha256 over the UTF-8 bytes (and `sha256sum` for the first
// token value).
const VECTORS = [
  { input: '', sha256: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855' },
  { input: 'abc', sha256: 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad' },
  {
    input: 'dap_0123456789ABCDEFGHIJKLMNOPQRSTUV2jCnw5',
    sha256: '55420ff15a64406c396d0b31d4a4871adccaef0e6e7dd3c5cb95c8d32db50a57',
  },
  {
    input: 'dap_x9QaR2mK7vLp3TzB8nYc4HsD6jFg1WeU4fuKDx',
    sha256: '72581826c7bdb115ca9133383e83fbea653449197bae4055285d67fe1917a4de',
  },
  { input: 'é€𝄞', sha256: '914b44317a4e1f0850bf59894ab838a905f124a87c52930a60f3d13c40ad4a31' },
] as const

type HashModule = typeof import('../../src/tokens/token-hash.js')

// A fresh copy of the module, so that it resolves its synchronous path again under a stubbed runtime.
async function importFresh(): Promise<HashModule> {
  vi.resetModules()
  return import('../../src/tokens/token-hash.js')
}

afterEach(() => {
  vi.restoreAllMocks()
  vi.unstubAllGlobals()
})

describe('hashTokenValue and hashTokenValueAsync', () => {
  it.each(VECTORS)('SHA-256 of $input', async ({ input, sha256 }) => {
    expect(hashTokenValue(input)).toBe(sha256)
    expect(await hashTokenValueAsync(input)).toBe(sha256)
  })

  it('agree on every string (UTF-8, lone surrogates included)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: 'binary', maxLength: 64 }), async (value) => {
        const sync = hashTokenValue(value)
        expect(sync).toMatch(/^[0-9a-f]{64}$/)
        expect(await hashTokenValueAsync(value)).toBe(sync)
      }),
    )
  })

  it('refuse a value that is not a string, without echoing it', async () => {
    const secret = { toString: () => 'dap_0123456789ABCDEFGHIJKLMNOPQRSTUV2jCnw5' }
    expect(() => hashTokenValue(secret as unknown as string)).toThrow(
      new InvalidArgumentError('a token value must be a string'),
    )
    await expect(hashTokenValueAsync(secret as unknown as string)).rejects.toThrow(InvalidArgumentError)
    try {
      hashTokenValue(secret as unknown as string)
    } catch (error) {
      expect(String(error)).not.toContain('dap_')
    }
  })
})

// Each stub stands for a runtime: node:crypto with and without one-shot `hash`, a process whose
// getBuiltinModule lacks or throws for node:crypto, no getBuiltinModule (Workers, browsers), no process.
const RUNTIMES = [
  {
    runtime: 'node:crypto without crypto.hash',
    backend: 'node:crypto',
    stub: () => stubBuiltin(() => ({ createHash })),
  },
  {
    runtime: 'getBuiltinModule without node:crypto',
    backend: '@noble/hashes',
    stub: () => stubBuiltin(() => undefined),
  },
  {
    runtime: 'getBuiltinModule that throws',
    backend: '@noble/hashes',
    stub: () =>
      stubBuiltin(() => {
        throw new Error('No such built-in module: node:crypto')
      }),
  },
  {
    runtime: 'no getBuiltinModule (Workers, browsers)',
    backend: '@noble/hashes',
    stub: () => stubBuiltin(undefined),
  },
  { runtime: 'no process global', backend: '@noble/hashes', stub: () => vi.stubGlobal('process', undefined) },
] as const

function stubBuiltin(getBuiltinModule: ((id: string) => unknown) | undefined) {
  vi.stubGlobal('process', { ...process, getBuiltinModule })
}

// Loads a fresh module (with the real globals: loading modules needs `process`), lets it pick its
// backend under a stubbed runtime (it resolves lazily, on first use), then restores the real globals
// before any assertion, so vitest itself never runs without `process`.
async function underRuntime(stub: () => void): Promise<HashModule> {
  const fresh = await importFresh()
  stub()
  try {
    fresh.tokenHashBackend()
    return fresh
  } finally {
    vi.unstubAllGlobals()
  }
}

describe('every runtime path gives the same digest', () => {
  it('uses node:crypto on Node', () => {
    expect(tokenHashBackend()).toBe('node:crypto')
  })

  it.each(RUNTIMES)('$runtime: $backend', async ({ stub, backend }) => {
    const fresh = await underRuntime(stub)
    expect(fresh.tokenHashBackend()).toBe(backend)
    for (const { input, sha256 } of VECTORS) expect(fresh.hashTokenValue(input)).toBe(sha256)
  })

  it('the pure-JS path agrees with node:crypto on every string (UTF-8, lone surrogates included)', async () => {
    const pure = await underRuntime(() => stubBuiltin(undefined))
    expect(pure.tokenHashBackend()).toBe('@noble/hashes')
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 200 }), (value) => {
        expect(pure.hashTokenValue(value)).toBe(createHash('sha256').update(value, 'utf8').digest('hex'))
      }),
    )
  })

  it('sha256Base64Url (a DPoP ath, a JWK thumbprint) agrees on every path', async () => {
    const pure = await underRuntime(() => stubBuiltin(undefined))
    const node = await importFresh()
    for (const value of ['', 'abc', 'dao_token', 'é\u{1f600}']) {
      const expected = createHash('sha256').update(value, 'utf8').digest('base64url')
      expect([pure.sha256Base64Url(value), node.sha256Base64Url(value)]).toEqual([expected, expected])
    }
  })

  it('the pure-JS path refuses a value that is not a string, as node:crypto does', async () => {
    const pure = await underRuntime(() => stubBuiltin(undefined))
    // A fresh module graph has its own error classes: compare the stable code, not the class.
    expect(() => pure.hashTokenValue(42 as unknown as string)).toThrow(
      expect.objectContaining({ code: new InvalidArgumentError('x').code }),
    )
  })

  it.each([
    ['a crypto without subtle', {}],
    ['no crypto at all', undefined],
  ])('hashes asynchronously only with Web Crypto: %s', async (_name, crypto) => {
    vi.stubGlobal('crypto', crypto)
    const refusal = await hashTokenValueAsync('abc').catch((error: unknown) => error)
    expect(refusal).toBeInstanceOf(ConfigError)
    expect(refusal).toMatchObject({
      path: [],
      message: 'hashTokenValueAsync needs Web Crypto (globalThis.crypto.subtle)',
    })
  })
})
