import { afterEach, describe, expect, test, vi } from 'vitest'
import { bodyHasAccessToken, queryHasAccessToken } from '../../adapters/shared/access-token-parameter.js'
import { readAuthorizationValues } from '../../adapters/shared/authorization-header.js'
import { prepareData, requireAllow } from '../../adapters/shared/data-response.js'
import { ExportCapExceededError, meterChunks } from '../../adapters/shared/metered-chunks.js'
import { checkRouteAccess } from '../../adapters/shared/route-access.js'
import { createExportMeter } from '../../src/decisions/export-meter.js'
import { type Allow, createAccessPolicy, InvalidArgumentError } from '../../src/index.js'
import { MemoryTokenStore } from '../../src/tokens/memory-token-store.js'

const capped: Allow = { allowed: true, dataContent: true, limits: { maxBytes: 10, maxRecords: 2 } }
const policy = createAccessPolicy({ tokens: new MemoryTokenStore() })

describe('readAuthorizationValues', () => {
  const message = (rawHeaders: string[]) => {
    const headers: Record<string, string> = {}
    for (let i = 0; i < rawHeaders.length; i += 2)
      headers[rawHeaders[i]!.toLowerCase()] ??= rawHeaders[i + 1]!
    return { headers, rawHeaders }
  }

  test.each([
    ['no header', ['Host', 'x'], []],
    ['one header', ['Authorization', 'Bearer a'], ['Bearer a']],
    ['an empty header', ['Authorization', ''], ['']],
    [
      'two headers in any case, in order',
      ['authorization', 'Bearer a', 'Host', 'x', 'AUTHORIZATION', 'Basic b'],
      ['Bearer a', 'Basic b'],
    ],
    ['a look-alike name', ['Authorization-X', 'a', 'Authorization', 'Bearer b'], ['Bearer b']],
  ])('%s', (_name, rawHeaders, expected) => {
    expect(readAuthorizationValues(message(rawHeaders))).toEqual(expected)
  })

  test('falls back to the parsed header when raw headers are missing', () => {
    expect(readAuthorizationValues({ headers: { authorization: 'Bearer a' }, rawHeaders: [] })).toEqual([
      'Bearer a',
    ])
  })
})

describe('queryHasAccessToken', () => {
  test.each([
    ['/x', false],
    ['/x?', false],
    ['/x?a=1&b=2', false],
    ['/x?access_tokens=1', false],
    ['/x?my_access_token=1', false],
    ['/x?access%5Ftoken%3D=1', false],
    ['/x?access_token', true],
    ['/x?access_token=', true],
    ['/x?a=1&access_token=t', true],
    ['/x?access%5Ftoken=t', true],
    ['/x?%61ccess_token=t', true],
    ['http://h/x?access_token=t', true],
  ])('%s → %s', (target, expected) => {
    expect(queryHasAccessToken(target)).toBe(expected)
  })
})

describe('bodyHasAccessToken', () => {
  const form = new FormData()
  form.set('access_token', 't')
  test.each([
    ['a JSON object with it', { access_token: '' }, true],
    ['a null-prototype object with it', Object.assign(Object.create(null), { access_token: 't' }), true],
    ['URLSearchParams with it', new URLSearchParams('access_token=t'), true],
    ['FormData with it', form, true],
    ['an object without it', { table: 'x' }, false],
    ['an inherited property', Object.create({ access_token: 't' }), false],
    ['an unparsed string', 'access_token=t', false],
    ['an array', ['access_token'], false],
    ['nothing', undefined, false],
    ['null', null, false],
  ])('%s → %s', (_name, body, expected) => {
    expect(bodyHasAccessToken(body)).toBe(expected)
  })
})

describe('meterChunks', () => {
  async function* source(log: string[], ...chunks: string[]) {
    try {
      for (const data of chunks) yield { data, records: 1 }
    } finally {
      log.push('closed')
    }
  }

  test('yields every chunk within the caps, as UTF-8 bytes', async () => {
    const out: number[] = []
    for await (const bytes of meterChunks(source([], 'é', 'abc'), createExportMeter(capped)))
      out.push(bytes.byteLength)
    expect(out).toEqual([2, 3])
  })

  test('never yields the chunk that passes a cap, and closes the source', async () => {
    const log: string[] = []
    const out: string[] = []
    const run = async () => {
      for await (const bytes of meterChunks(source(log, 'aaaa', 'bbbb', 'cccc'), createExportMeter(capped))) {
        out.push(new TextDecoder().decode(bytes))
      }
    }
    await expect(run()).rejects.toBeInstanceOf(ExportCapExceededError)
    expect(out).toEqual(['aaaa', 'bbbb'])
    expect(log).toEqual(['closed'])
  })

  test('the error names no limit', () => {
    expect(new ExportCapExceededError().message).not.toMatch(/\d/)
  })
})

describe('prepareData and requireAllow', () => {
  test('encodes a string and defaults to JSON', () => {
    expect(prepareData(policy, capped, { body: 'é', records: 1 })).toEqual({
      ok: true,
      status: 200,
      contentType: 'application/json; charset=utf-8',
      bytes: new TextEncoder().encode('é'),
    })
  })

  test('defaults bytes to octet-stream and keeps the status', () => {
    const prepared = prepareData(policy, capped, { body: new Uint8Array(3), records: 0, status: 206 })
    expect(prepared).toMatchObject({ ok: true, status: 206, contentType: 'application/octet-stream' })
  })

  test.each([
    ['bytes over the cap', { body: 'x'.repeat(11), records: 1 }],
    ['records over the cap', { body: 'x', records: 3 }],
  ])('%s is export_restricted', (_name, data) => {
    expect(prepareData(policy, capped, data)).toMatchObject({
      ok: false,
      decision: { code: 'export_restricted' },
    })
  })

  test('a route without an allow decision is a loud host error', () => {
    expect(() => prepareData(policy, undefined, { body: 'x', records: 1 })).toThrow(InvalidArgumentError)
    expect(() => requireAllow({ allowed: false } as unknown as Allow, 'streamData')).toThrow(/^streamData: /)
  })

  test('data sent under an allow for an operation without data content is a loud host error', () => {
    const overview: Allow = { allowed: true, operation: 'dataset.overview', dataContent: false }
    expect(() => prepareData(policy, overview, { body: 'x', records: 1 })).toThrow(
      'sendData: the route\'s operation "dataset.overview" carries no data content',
    )
    expect(() => requireAllow(overview, 'streamData')).toThrow(/^streamData: /)
  })

  test.each([undefined, -1, 1.5, Number.NaN])(
    'a declared record count of %s is a loud host error',
    (records) => {
      expect(() => prepareData(policy, capped, { body: 'x', records: records as number })).toThrow(
        /^sendData: records must be the number of records in the body/,
      )
    },
  )
})

describe('checkRouteAccess', () => {
  test('accepts a known operation with a resolver', () => {
    expect(checkRouteAccess('table.read', () => undefined, 'GET /x')).toBe('table.read')
  })

  test.each([
    ['an unknown operation', 'table.write', () => undefined, /^GET \/x: unknown operation "table\.write"/],
    ['an inherited name', 'toString', () => undefined, /unknown operation/],
    ['a missing resolver', 'table.read', undefined, /needs a resource resolver/],
  ])('rejects %s', (_name, operation, resolve, message) => {
    expect(() => checkRouteAccess(operation, resolve, 'GET /x')).toThrow(message)
  })
})

describe('rules the other cases leave apart', () => {
  afterEach(() => {
    vi.unstubAllGlobals()
  })

  test.each([
    ['a parameter right after the first character', '/?access_token=x', true],
    // Without a `?` there is no query: a path segment that looks like parameters is no parameter.
    ['a path segment shaped like a parameter', '/datasets/a&access_token=x', false],
    ['a path segment with an encoded look-alike', '/datasets/a&access%5Ftoken=x', false],
  ])('queryHasAccessToken: %s', (_name, target, expected) => {
    expect(queryHasAccessToken(target)).toBe(expected)
  })

  test('bodyHasAccessToken works where FormData does not exist', () => {
    vi.stubGlobal('FormData', undefined)
    expect(bodyHasAccessToken({ access_token: 'x' })).toBe(true)
    expect(bodyHasAccessToken({ other: 'x' })).toBe(false)
  })

  test('readAuthorizationValues: another 13-character header is not Authorization', () => {
    const rawHeaders = ['Cache-Control', 'no-cache', 'Authorization', 'Bearer a']
    expect(readAuthorizationValues({ headers: { authorization: 'Bearer a' }, rawHeaders })).toEqual([
      'Bearer a',
    ])
  })

  test('readAuthorizationValues: a name without its value is skipped', () => {
    expect(
      readAuthorizationValues({ headers: { authorization: 'Bearer a' }, rawHeaders: ['Authorization'] }),
    ).toEqual(['Bearer a'])
  })

  test('a byte body is sent as it is, not re-encoded', () => {
    const bytes = new Uint8Array([0xff, 0x00, 0x41])
    const prepared = prepareData(policy, capped, { body: bytes, records: 1 })
    expect(prepared).toMatchObject({ ok: true })
    if (prepared.ok) expect([...prepared.bytes]).toEqual([0xff, 0x00, 0x41])
  })

  test('the stream error names what happened and no limit', () => {
    const error = new ExportCapExceededError()
    expect(error.name).toBe('ExportCapExceededError')
    expect(error.message).toBe('export restriction exceeded while streaming; the response was aborted')
  })

  test('checkRouteAccess refuses an object that only stringifies to an operation', () => {
    const lookalike = { toString: () => 'dataset.metadata' }
    expect(() => checkRouteAccess(lookalike, () => undefined, 'GET /x')).toThrow(InvalidArgumentError)
  })
})
