import { describe, expect, test } from 'vitest'
import { runCli } from '../cli/main.js'
import { isWellFormedTokenValue } from '../src/tokens/token-format.js'
import { DAY_MS } from '../src/tokens/token-lifetime.js'

describe('data-access-policy token --lifetime', () => {
  test.each([7, 30, 60, 90, 365])('%i days: the value, then its expiry for a seed file', (days) => {
    const before = Date.now()
    const result = runCli(['token', '--lifetime', String(days)])
    expect(result.code).toBe(0)
    const [value, expiry] = result.stdout.trim().split('\n')
    expect(isWellFormedTokenValue(value!)).toBe(true)
    const at = Date.parse(expiry!.replace('expiresAt: ', ''))
    expect(at - before).toBeGreaterThanOrEqual(days * DAY_MS)
    expect(at - Date.now()).toBeLessThanOrEqual(days * DAY_MS)
  })

  test('a date, and none', () => {
    expect(runCli(['token', '--lifetime', '2099-01-31']).stdout).toMatch(
      /\nexpiresAt: 2099-01-31T00:00:00\.000Z\n$/,
    )
    expect(runCli(['token', '--lifetime', 'none']).stdout).toMatch(/\nexpiresAt: none\n$/)
  })

  test.each([
    [
      ['--lifetime', '365', '--max-lifetime', '90'],
      'token lifetimes are capped at 90 days: choose an expiry within 90 days\n',
    ],
    [['--lifetime', 'none', '--max-lifetime', '90'], /capped at 90 days.*no expiry is not allowed/],
    [['--lifetime', '2099-01-31', '--max-lifetime', '90'], /capped at 90 days/],
    [['--lifetime', '14'], /--lifetime must be 7, 30, 60, 90, 365, a date YYYY-MM-DD in the future or none/],
    [['--lifetime', '2020-01-01'], /--lifetime must be/],
    [['--lifetime', '2099-02-30'], /--lifetime must be/],
    [
      ['--lifetime', '30', '--max-lifetime', '0'],
      /--max-lifetime must be a whole number of days from 1 to 36500/,
    ],
  ])('%j is refused with exit 2', (args, message) => {
    const result = runCli(['token', ...args])
    expect(result.code).toBe(2)
    expect(result.stdout).toBe('')
    expect(result.stderr).toMatch(message)
  })

  test('under the cap it passes', () => {
    expect(runCli(['token', '--lifetime', '30', '--max-lifetime', '90']).code).toBe(0)
  })
})
