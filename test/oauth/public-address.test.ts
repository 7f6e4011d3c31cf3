import { describe, expect, it } from 'vitest'
import { isPublicAddress } from '../../src/oauth/public-address.js'

describe('isPublicAddress', () => {
  it.each([
    ['93.184.215.14'],
    ['8.8.8.8'],
    ['1.1.1.1'],
    ['100.63.255.255'],
    ['100.128.0.0'],
    ['172.15.255.255'],
    ['172.32.0.0'],
    ['192.167.255.255'],
    ['223.255.255.255'],
    ['2606:4700:4700::1111'],
    ['2001:4860:4860::8888'],
    ['2a00:1450:4001:82b::200e'],
    ['64:ff9b::808:808'], // NAT64 of 8.8.8.8
    ['2002:808:808::1'], // 6to4 of 8.8.8.8
  ])('%s is public', (address) => {
    expect(isPublicAddress(address)).toBe(true)
  })

  it.each([
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'this network'],
    ['10.0.0.1', 'RFC 1918'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['100.127.255.255', 'carrier-grade NAT'],
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['169.254.169.254', 'link-local (cloud metadata)'],
    ['172.16.0.1', 'RFC 1918'],
    ['172.31.255.255', 'RFC 1918'],
    ['192.0.0.8', 'IETF protocol assignments'],
    ['192.0.2.1', 'TEST-NET-1'],
    ['192.168.1.1', 'RFC 1918'],
    ['198.18.0.1', 'benchmarking'],
    ['198.51.100.7', 'TEST-NET-2'],
    ['203.0.113.9', 'TEST-NET-3'],
    ['224.0.0.1', 'multicast'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'broadcast'],
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['::ffff:10.0.0.1', 'mapped RFC 1918'],
    ['::ffff:127.0.0.1', 'mapped loopback'],
    ['::ffff:169.254.169.254', 'mapped link-local'],
    ['::ffff:a00:1', 'mapped RFC 1918, hex form'],
    ['::10.0.0.1', 'IPv4-compatible'],
    ['::8.8.8.8', 'IPv4-compatible, deprecated'],
    ['64:ff9b::a00:1', 'NAT64 of 10.0.0.1'],
    ['64:ff9b::7f00:1', 'NAT64 of 127.0.0.1'],
    ['64:ff9b:1::808:808', 'local-use NAT64'],
    ['2002:a00:1::1', '6to4 of 10.0.0.1'],
    ['2002:7f00:1::1', '6to4 of 127.0.0.1'],
    ['100::1', 'discard-only'],
    ['2001::1', 'Teredo'],
    ['2001:db8::1', 'documentation'],
    ['3fff::1', 'documentation'],
    ['5f00::1', 'SRv6'],
    ['fc00::1', 'unique local'],
    ['fd12:3456::1', 'unique local'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'zoned link-local'],
    ['2606:4700::1%eth0', 'zoned'],
    ['fec0::1', 'site-local'],
    ['ff02::1', 'multicast'],
    ['4000::1', 'outside global unicast'],
    ['localhost', 'a name'],
    ['010.0.0.1', 'a legacy form'],
    ['167772161', 'a legacy form'],
    ['0x7f.0.0.1', 'a legacy form'],
    ['', 'empty'],
    ['[::1]', 'bracketed'],
  ])('%s is not public (%s)', (address) => {
    expect(isPublicAddress(address)).toBe(false)
  })
})
