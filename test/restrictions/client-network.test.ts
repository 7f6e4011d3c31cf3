import { describe, expect, test } from 'vitest'
import { networkOfAddress } from '../../src/restrictions/client-network.js'

describe('networkOfAddress', () => {
  test.each([
    ['203.0.113.7', '203.0.113.7'],
    ['::ffff:203.0.113.7', '203.0.113.7'],
    ['2001:db8:1:2:a:b:c:d', '2001:db8:1:2::/64'],
    ['2001:db8:1:2::', '2001:db8:1:2::/64'],
    ['2001:DB8:1:2:ffff:ffff:ffff:ffff', '2001:db8:1:2::/64'],
    ['fe80::1%eth0', 'fe80::/64'],
    ['::1', '::/64'],
  ])('%s is in the network %s', (address, network) => {
    expect(networkOfAddress(address)).toBe(network)
  })

  test('two addresses of one /64 are one network; the next /64 is another', () => {
    expect(networkOfAddress('2001:db8:0:1::1')).toBe(networkOfAddress('2001:db8:0:1:ffff::9'))
    expect(networkOfAddress('2001:db8:0:2::1')).not.toBe(networkOfAddress('2001:db8:0:1::1'))
  })

  test.each([
    [48, '2001:db8:1::/48'],
    [128, '2001:db8:1:2:a:b:c:d/128'],
    [1, '::/1'],
  ])('takes another IPv6 prefix: /%i', (prefix, network) => {
    expect(networkOfAddress('2001:db8:1:2:a:b:c:d', prefix)).toBe(network)
  })

  test.each([undefined, '', '10.1', '010.1.1.1', '10.1.2.3:8080', '10.1.2.0/24', 'localhost', '2001:db8::g'])(
    '%j is no network',
    (address) => {
      expect(networkOfAddress(address)).toBeUndefined()
    },
  )

  test.each([0, 129, 64.5, Number.NaN])('refuses the IPv6 prefix %s', (prefix) => {
    expect(networkOfAddress('2001:db8::1', prefix)).toBeUndefined()
  })
})
