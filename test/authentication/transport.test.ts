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
    ['::127.0.0.1', false],
    ['localhost', false],
    ['127.0.0.1:80', false],
    ['', false],
    [undefined, false],
  ])('%j → %s', (address, expected) => {
    expect(isLoopbackAddress(address)).toBe(expected)
  })
})
