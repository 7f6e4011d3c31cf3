import { describe, expect, test } from 'vitest'
import { isLoopbackAddress } from '../../src/authentication/transport.js'

describe('isLoopbackAddress', () => {
  test.each([
    ['127.0.0.1', true],
    ['127.255.255.254', true],
    ['::1', true],
    ['0:0:0:0:0:0:0:1', true],
    ['::ffff:127.0.0.1', true],
    ['::ffff:7f00:1', true],
    ['128.0.0.1', false],
    ['10.0.0.1', false],
    ['::2', false],
    // Each 32-bit word of ::1 must match: a one in any other word is not loopback.
    ['1::1', false],
    ['0:1::1', false],
    ['::1:0:0:0:1', false],
    ['::1:0:0:1', false],
    ['::1:0:1', false],
    ['::1:1', false],
    ['::ffff:127.9.8.7', true],
    ['::127.0.0.1', false],
    ['localhost', false],
    ['127.0.0.1:80', false],
    ['', false],
    [undefined, false],
  ])('%j → %s', (address, expected) => {
    expect(isLoopbackAddress(address)).toBe(expected)
  })
})
