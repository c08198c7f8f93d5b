// The address check for resolved names (the relay's media fetches, npm start's outbound guard): every IANA
// special-purpose range that is not global is refused, at its first and last address; global unicast (and NAT64 of a
// global IPv4 address) is accepted.
import { describe, expect, it } from 'vitest'
import { IPV4_REFUSED, IPV6_REFUSED, isFetchableAddress, isGlobalAddress } from '../../common/address-ranges'

/** The first and last address of an IPv4 range. */
function v4Bounds(net: string, prefix: number): [string, string] {
  const n = net.split('.').reduce((a, p) => a * 256 + Number(p), 0)
  const last = n + 2 ** (32 - prefix) - 1
  const dotted = (x: number) => [24, 16, 8, 0].map((s) => Math.floor(x / 2 ** s) % 256).join('.')
  return [dotted(n), dotted(last)]
}

/** The first and last address of an IPv6 range, fully written out. */
function v6Bounds(net: string, prefix: number): [string, string] {
  const [head = '', tail = ''] = net.split('::')
  const h = head ? head.split(':') : []
  const t = tail ? tail.split(':') : []
  const groups = [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t].map((g) => parseInt(g, 16))
  const big = groups.reduce((a, g) => (a << 16n) | BigInt(g), 0n)
  const hostBits = BigInt(128 - prefix)
  const first = (big >> hostBits) << hostBits
  const last = first | ((1n << hostBits) - 1n)
  const text = (x: bigint) => Array.from({ length: 8 }, (_, i) => ((x >> BigInt((7 - i) * 16)) & 0xffffn).toString(16)).join(':')
  return [text(first), text(last)]
}

describe('IPv4 special-purpose ranges', () => {
  it.each(IPV4_REFUSED.map((r) => [`${r.net}/${r.prefix}`, r.name, r] as const))('refuses %s (%s) at both ends', (_cidr, _name, r) => {
    const [first, last] = v4Bounds(r.net, r.prefix)
    expect(isGlobalAddress(first)).toBe(false)
    expect(isGlobalAddress(last)).toBe(false)
  })

  it.each([
    '1.1.1.1',
    '8.8.8.8',
    '9.255.255.255',
    '11.0.0.0',
    '100.63.255.255',
    '100.128.0.0',
    '172.15.255.255',
    '172.32.0.0',
    '192.0.1.0',
    '192.169.0.0',
    '198.17.255.255',
    '198.20.0.0',
    '223.255.255.255',
  ])('accepts the global address %s', (ip) => expect(isGlobalAddress(ip)).toBe(true))
})

describe('IPv6 special-purpose ranges', () => {
  it.each(IPV6_REFUSED.map((r) => [`${r.net}/${r.prefix}`, r.name, r] as const))('refuses %s (%s) at both ends', (_cidr, _name, r) => {
    const [first, last] = v6Bounds(r.net, r.prefix)
    expect(isGlobalAddress(first)).toBe(false)
    expect(isGlobalAddress(last)).toBe(false)
  })

  it.each([
    '::ffff:8.8.8.8',
    '::ffff:10.0.0.1',
    '::ffff:169.254.169.254',
    'fec0::1',
    '2001::1',
    '2001:0:4136:e378::1',
    '100::1',
    'fd00:ec2::254',
    '3fff::1',
    '::2',
    '4000::1',
    'e000::1',
  ])('refuses the non-global address %s', (ip) => expect(isGlobalAddress(ip)).toBe(false))

  it.each(['2606:4700:4700::1111', '2a00:1450:4001:80b::200e', '2001:4860:4860::8888', '2001:200::1', '2620:fe::fe', '64:ff9b::8.8.8.8', '64:ff9b::808:808'])(
    'accepts the global address %s',
    (ip) => expect(isGlobalAddress(ip)).toBe(true)
  )

  it('judges NAT64 addresses by the IPv4 address they carry', () => {
    expect(isGlobalAddress('64:ff9b::a9fe:a9fe')).toBe(false)
    expect(isGlobalAddress('64:ff9b::10.0.0.1')).toBe(false)
  })
})

describe('fetchable addresses', () => {
  it('admits loopback only when a test asks for it, and never other private space', () => {
    expect(isFetchableAddress('127.0.0.1', { allowLoopback: false })).toBe(false)
    expect(isFetchableAddress('::1', { allowLoopback: false })).toBe(false)
    expect(isFetchableAddress('127.0.0.1', { allowLoopback: true })).toBe(true)
    expect(isFetchableAddress('::1', { allowLoopback: true })).toBe(true)
    expect(isFetchableAddress('10.0.0.1', { allowLoopback: true })).toBe(false)
    expect(isFetchableAddress('not an address', { allowLoopback: true })).toBe(false)
  })
})
