import { expect, test } from 'vitest'
import { tableToCsv } from '../../examples/server/api/csv.js'
import { hashPassword, verifyPassword } from '../../examples/server/limits/password-hash.js'

test('tables become RFC 4180 CSV', () => {
  const csv = tableToCsv({
    name: 't',
    variables: [
      { name: 'id', type: 'integer' },
      { name: 'note', type: 'string' },
    ],
    rows: [
      [1, 'plain'],
      [2, 'a, "quoted"\nline'],
      [3, null],
    ],
  })
  expect(csv).toBe('id,note\r\n1,plain\r\n2,"a, ""quoted""\nline"\r\n3,\r\n')
})

test('passwords: scrypt with a fresh salt, verified in constant time', async () => {
  const first = await hashPassword('correct horse')
  const second = await hashPassword('correct horse')
  expect(first).not.toBe(second)
  expect(await verifyPassword('correct horse', first)).toBe(true)
  expect(await verifyPassword('correct horse!', first)).toBe(false)
  expect(await verifyPassword('correct horse', 'scrypt$1$1$1$x$y')).toBe(false)
  expect(await verifyPassword('correct horse', 'plain')).toBe(false)
})
