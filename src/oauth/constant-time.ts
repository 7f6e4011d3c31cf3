// Private comparison helper of the OAuth module; not part of the public API.

/**
 * Compares two strings in time that depends only on the length of `expected`, so that a secret's
 * content never leaks through timing. Only lengths, which are public (43 for a challenge, 64 for a
 * hash), may show.
 */
export function timingSafeEqual(actual: string, expected: string): boolean {
  const length = expected.length
  const sameLength = actual.length === length
  // With different lengths the loop still runs over `expected`, compared with itself.
  const left = sameLength ? actual : expected
  let diff = sameLength ? 0 : 1
  for (let i = 0; i < length; i++) diff |= left.charCodeAt(i) ^ expected.charCodeAt(i)
  return diff === 0
}
