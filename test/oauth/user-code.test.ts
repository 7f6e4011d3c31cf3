import { describe, expect, it, vi } from 'vitest'
import { InvalidArgumentError } from '../../src/errors.js'
import {
  formatUserCode,
  generateUserCode,
  normalizeUserCode,
  USER_CODE_ALPHABET,
} from '../../src/oauth/user-code.js'

describe('user codes (RFC 8628 §6.1)', () => {
  it('draws 8 letters of the consonant alphabet, every letter reachable', () => {
    const seen = new Set<string>()
    for (let i = 0; i < 400; i++) {
      const code = generateUserCode()
      expect(code).toMatch(/^[BCDFGHJKLMNPQRSTVWXZ]{8}$/)
      for (const letter of code) seen.add(letter)
    }
    expect([...seen].sort().join('')).toBe(USER_CODE_ALPHABET)
  })

  it('draws again for the bytes that would bias the alphabet', () => {
    const spy = vi.spyOn(globalThis.crypto, 'getRandomValues').mockImplementationOnce((array) => {
      // Every byte of the first draw is above the unbiased limit (240): none may be used.
      ;(array as Uint8Array).fill(250)
      return array
    })
    expect(generateUserCode()).toMatch(/^[BCDFGHJKLMNPQRSTVWXZ]{8}$/)
    expect(spy).toHaveBeenCalledTimes(2)
    spy.mockRestore()
  })

  it('needs Web Crypto', () => {
    vi.stubGlobal('crypto', undefined)
    try {
      expect(() => generateUserCode()).toThrow(InvalidArgumentError)
    } finally {
      vi.unstubAllGlobals()
    }
  })

  it('is displayed in two groups of four', () => {
    expect(formatUserCode('WDJBMJHT')).toBe('WDJB-MJHT')
  })

  it.each([
    ['WDJB-MJHT', 'WDJBMJHT'],
    ['wdjb-mjht', 'WDJBMJHT'],
    ['WdJb MjHt', 'WDJBMJHT'],
    ['  WDJB.MJHT\t', 'WDJBMJHT'],
    ['W-D-J-B-M-J-H-T', 'WDJBMJHT'],
    ['WDJB–MJHT', 'WDJBMJHT'],
    ['WDJBMJHT', 'WDJBMJHT'],
  ])('matches %j as %s (case, white space and punctuation ignored)', (input, normalized) => {
    expect(normalizeUserCode(input)).toBe(normalized)
  })

  it.each([
    ['too short', 'WDJB-MJH'],
    ['too long', 'WDJB-MJHTB'],
    ['a vowel', 'WDJB-MJHA'],
    ['a digit', 'WDJB-MJH1'],
    ['a non-ASCII letter, never folded', 'WDJB-MJHŢ'],
    ['a dotless i', 'WDJB-MJHı'],
    ['empty', ''],
    ['absurdly long', `${'WDJB-MJHT '.repeat(10)}`],
  ])('refuses %s', (_name, input) => {
    expect(normalizeUserCode(input)).toBeUndefined()
  })

  it('refuses a non-string', () => {
    expect(normalizeUserCode(42 as unknown as string)).toBeUndefined()
  })
})
