import { describe, expect, test } from 'vitest'
import { findTokenValues, generateTokenValue, tokenValueHint } from '../../src/tokens/token-format.js'

const API = 'dap_0123456789ABCDEFGHIJKLMNOPQRSTUV2jCnw5'
const OAUTH = 'dao_zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz0UTLEi'

describe('findTokenValues', () => {
  test('finds every value with its place and kind, wherever it sits', () => {
    const text = `SERVICE_API_TOKEN=${API}\n{"token":"${OAUTH}"} 'x' ${API}`
    expect(findTokenValues(text)).toEqual([
      { index: 18, value: API, kind: 'api' },
      { index: text.indexOf(OAUTH), value: OAUTH, kind: 'oauth' },
      { index: text.lastIndexOf(API), value: API, kind: 'api' },
    ])
  })

  test('finds generated values', () => {
    const values = Array.from({ length: 50 }, (_, i) => generateTokenValue(i % 2 === 0 ? 'api' : 'oauth'))
    expect(findTokenValues(values.join(' ')).map((found) => found.value)).toEqual(values)
  })

  test.each([
    ['a wrong checksum', `${API.slice(0, -1)}6`],
    ['a wrong prefix', `dax_${API.slice(4)}`],
    ['an upper-case prefix', `DAP_${API.slice(4)}`],
    ['one character short', API.slice(0, -1)],
    ['inside a longer run of base62 (after)', `${API}x`],
    ['inside a longer run of base62 (before)', `x${API}`],
    ['a value with a character swapped', `${API.slice(0, 10)}${API[11]}${API[10]}${API.slice(12)}`],
  ])('finds nothing in %s', (_what, text) => {
    expect(findTokenValues(text)).toEqual([])
  })

  test('a separator that is not base62 bounds a value', () => {
    expect(findTokenValues(`_${API}-`)).toHaveLength(1)
    expect(findTokenValues(`/${API}.`)).toHaveLength(1)
  })

  test('the hint shows the prefix and the last four characters only', () => {
    expect(tokenValueHint(API)).toBe('dap_…Cnw5')
  })
})
