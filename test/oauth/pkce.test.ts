import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { InvalidArgumentError } from '../../src/errors.js'
import { calculatePkceChallenge } from '../../src/oauth/calculate-pkce-challenge.js'
import { timingSafeEqual } from '../../src/oauth/constant-time.js'
import {
  isValidCodeChallenge,
  isValidCodeVerifier,
  requireS256Challenge,
} from '../../src/oauth/pkce-syntax.js'
import { verifyPkce } from '../../src/oauth/verify-pkce.js'
import { encodeBase64Url } from '../../src/tokens/base64url.js'
import { RFC_CHALLENGE, RFC_VERIFIER } from './fixtures.js'

// RFC 7636 Appendix B, as data: the random octets, the verifier, the SHA-256 octets, the challenge.
const RFC_7636_APPENDIX_B = {
  verifierOctets: [
    116, 24, 223, 180, 151, 153, 224, 37, 79, 250, 96, 125, 216, 173, 187, 186, 22, 212, 37, 77, 105, 214,
    191, 240, 91, 88, 5, 88, 83, 132, 141, 121,
  ],
  verifier: 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk',
  challengeOctets: [
    19, 211, 30, 150, 26, 26, 216, 236, 47, 22, 177, 12, 76, 152, 46, 8, 118, 168, 120, 173, 109, 241, 68, 86,
    110, 225, 137, 74, 203, 112, 249, 195,
  ],
  challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
}

const UNRESERVED = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~'

describe('RFC 7636 Appendix B (S256 example)', () => {
  it('encodes the verifier octets as the verifier', () => {
    expect(encodeBase64Url(Uint8Array.from(RFC_7636_APPENDIX_B.verifierOctets))).toBe(
      RFC_7636_APPENDIX_B.verifier,
    )
  })

  it('encodes the SHA-256 octets as the challenge', () => {
    expect(encodeBase64Url(Uint8Array.from(RFC_7636_APPENDIX_B.challengeOctets))).toBe(
      RFC_7636_APPENDIX_B.challenge,
    )
  })

  it('calculates the challenge from the verifier', () => {
    expect(calculatePkceChallenge(RFC_7636_APPENDIX_B.verifier)).toBe(RFC_7636_APPENDIX_B.challenge)
    expect(RFC_CHALLENGE).toBe(RFC_7636_APPENDIX_B.challenge)
  })

  it('verifies the pair', () => {
    expect(verifyPkce(RFC_7636_APPENDIX_B.verifier, RFC_7636_APPENDIX_B.challenge)).toBe(true)
  })

  it('refuses the mistyped challenge "…CHoeqb8W5Hfl4T2HnJk2FOg" that circulates for this verifier', () => {
    // Well formed, but not SHA-256 of the verifier: a vector typo must fail, not pass.
    const typo = 'E9Melhoa2OwvFrEMTJguCHoeqb8W5Hfl4T2HnJk2FOg'
    expect(isValidCodeChallenge(typo)).toBe(true)
    expect(verifyPkce(RFC_VERIFIER, typo)).toBe(false)
  })
})

describe('base64url encoding', () => {
  it.each([
    [[], ''],
    [[0xff], '_w'],
    [[0xff, 0xfe], '__4'],
    [[0xfb, 0xff, 0xbf], '-_-_'],
  ])('encodes %j as %s, unpadded', (octets, encoded) => {
    expect(encodeBase64Url(Uint8Array.from(octets))).toBe(encoded)
  })

  it('agrees with the runtime base64 for any octets', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 70 }), (octets) => {
        const reference = btoa(String.fromCharCode(...octets))
          .replaceAll('+', '-')
          .replaceAll('/', '_')
          .replace(/=+$/, '')
        expect(encodeBase64Url(octets)).toBe(reference)
      }),
    )
  })
})

describe('isValidCodeVerifier (RFC 7636 §4.1: 43*128unreserved)', () => {
  it.each([
    ['43 characters', 'a'.repeat(43)],
    ['128 characters', 'a'.repeat(128)],
    ['every unreserved character', UNRESERVED.slice(0, 66)],
    ['the Appendix B verifier', RFC_VERIFIER],
  ])('accepts %s', (_name, value) => {
    expect(isValidCodeVerifier(value)).toBe(true)
  })

  it.each([
    ['42 characters', 'a'.repeat(42)],
    ['129 characters', 'a'.repeat(129)],
    ['a plus sign', `${'a'.repeat(42)}+`],
    ['a slash', `${'a'.repeat(42)}/`],
    ['padding', `${'a'.repeat(42)}=`],
    ['a space', `${'a'.repeat(42)} `],
    ['a non-ASCII letter', `${'a'.repeat(42)}é`],
    ['an empty string', ''],
    ['a number', 42],
    ['undefined', undefined],
  ])('refuses %s', (_name, value) => {
    expect(isValidCodeVerifier(value)).toBe(false)
  })
})

describe('isValidCodeChallenge (S256: exactly 43 base64url characters)', () => {
  it.each([
    ['the Appendix B challenge', RFC_CHALLENGE, true],
    ['42 characters', RFC_CHALLENGE.slice(1), false],
    ['44 characters', `${RFC_CHALLENGE}A`, false],
    ['padding', `${RFC_CHALLENGE}=`, false],
    ['standard base64', `${RFC_CHALLENGE.slice(0, 42)}+`, false],
    ['a dot (unreserved, not base64url)', `${RFC_CHALLENGE.slice(0, 42)}.`, false],
    ['a verifier-length string', RFC_VERIFIER.repeat(2), false],
    ['a non-string', null, false],
  ])('%s → %s', (_name, value, valid) => {
    expect(isValidCodeChallenge(value)).toBe(valid)
  })
})

describe('verifyPkce', () => {
  const { verifier, challenge } = { verifier: RFC_VERIFIER, challenge: RFC_CHALLENGE }

  it.each([
    ['a wrong verifier', 'x'.repeat(43), challenge],
    ['the challenge as verifier', challenge, challenge],
    ['a malformed verifier', 'short', challenge],
    ['a malformed challenge', verifier, 'short'],
    ['a challenge off by one character', verifier, `${challenge.slice(0, 42)}N`],
  ])('refuses %s', (_name, v, c) => {
    expect(verifyPkce(v, c)).toBe(false)
  })

  it('accepts every verifier with its own challenge, and only that', () => {
    const verifierArbitrary = fc
      .array(fc.constantFrom(...UNRESERVED), { minLength: 43, maxLength: 128 })
      .map((chars) => chars.join(''))
    fc.assert(
      fc.property(verifierArbitrary, verifierArbitrary, (a, b) => {
        const challengeA = calculatePkceChallenge(a)
        expect(isValidCodeChallenge(challengeA)).toBe(true)
        expect(verifyPkce(a, challengeA)).toBe(true)
        expect(verifyPkce(b, challengeA)).toBe(a === b)
      }),
    )
  })
})

describe('calculatePkceChallenge', () => {
  it.each(['short', 'a'.repeat(129), `${'a'.repeat(42)}/`])('refuses the malformed verifier %s', (value) => {
    expect(() => calculatePkceChallenge(value)).toThrow(InvalidArgumentError)
  })
})

describe('requireS256Challenge (design §7: PKCE outcomes at the authorization endpoints)', () => {
  it.each([
    ['a missing challenge', undefined, 'S256', /code_challenge is required/],
    ['a missing method (RFC 7636 would default to plain)', RFC_CHALLENGE, undefined, /method is required/],
    ['plain', RFC_CHALLENGE, 'plain', /must be S256/],
    ['lower-case s256', RFC_CHALLENGE, 's256', /must be S256/],
    ['a malformed challenge', 'abc', 'S256', /43 base64url/],
  ])('refuses %s with invalid_request', (_name, challenge, method, message) => {
    expect(() => requireS256Challenge(challenge, method)).toThrow(
      expect.objectContaining({ error: 'invalid_request', message: expect.stringMatching(message) }),
    )
  })

  it('returns a well-formed S256 challenge', () => {
    expect(requireS256Challenge(RFC_CHALLENGE, 'S256')).toBe(RFC_CHALLENGE)
  })
})

describe('timingSafeEqual', () => {
  it.each([
    ['abc', 'abc', true],
    ['abd', 'abc', false],
    ['ab', 'abc', false],
    ['abcd', 'abc', false],
    ['', '', true],
  ])('%s vs %s → %s', (a, b, equal) => {
    expect(timingSafeEqual(a, b)).toBe(equal)
  })
})
