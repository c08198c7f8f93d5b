/**
 * Which resolved addresses may be connected to on a user's behalf (the relay's media fetches, and every outbound
 * fetch of the Worker under `npm start`, scripts/outbound-guard.mjs): global unicast only. Node only (net.BlockList):
 * the Worker cannot resolve names, so it never imports this.
 * The refused ranges are the IANA special-purpose registries' entries that are not globally reachable, plus what
 * those registries leave to the address-space registries (multicast, reserved, everything outside IPv6 global unicast):
 *   https://www.iana.org/assignments/iana-ipv4-special-registry/ (RFC 6890, updated by RFC 8190)
 *   https://www.iana.org/assignments/iana-ipv6-special-registry/
 *   https://www.iana.org/assignments/ipv4-address-space/ and https://www.iana.org/assignments/ipv6-address-space/
 * The few special-purpose ranges IANA marks globally reachable (PCP and TURN anycast, AS112, AMT, ORCHIDv2, Drone
 * Remote ID) are refused too: no media host lives there. Matching uses Node's `net.BlockList`.
 */
import { BlockList, isIPv4, isIPv6 } from 'node:net'

type Range = { net: string; prefix: number; name: string }

export const IPV4_REFUSED: readonly Range[] = [
  { net: '0.0.0.0', prefix: 8, name: '"this network" (RFC 791)' },
  { net: '10.0.0.0', prefix: 8, name: 'private-use (RFC 1918)' },
  { net: '100.64.0.0', prefix: 10, name: 'shared address space, carrier-grade NAT (RFC 6598)' },
  { net: '127.0.0.0', prefix: 8, name: 'loopback (RFC 1122)' },
  { net: '169.254.0.0', prefix: 16, name: 'link-local, cloud metadata (RFC 3927)' },
  { net: '172.16.0.0', prefix: 12, name: 'private-use (RFC 1918)' },
  { net: '192.0.0.0', prefix: 24, name: 'IETF protocol assignments (RFC 6890)' },
  { net: '192.0.2.0', prefix: 24, name: 'documentation TEST-NET-1 (RFC 5737)' },
  { net: '192.31.196.0', prefix: 24, name: 'AS112-v4 (RFC 7535)' },
  { net: '192.52.193.0', prefix: 24, name: 'AMT (RFC 7450)' },
  { net: '192.88.99.0', prefix: 24, name: 'deprecated 6to4 relay anycast (RFC 7526)' },
  { net: '192.168.0.0', prefix: 16, name: 'private-use (RFC 1918)' },
  { net: '192.175.48.0', prefix: 24, name: 'direct delegation AS112 service (RFC 7534)' },
  { net: '198.18.0.0', prefix: 15, name: 'benchmarking (RFC 2544)' },
  { net: '198.51.100.0', prefix: 24, name: 'documentation TEST-NET-2 (RFC 5737)' },
  { net: '203.0.113.0', prefix: 24, name: 'documentation TEST-NET-3 (RFC 5737)' },
  { net: '224.0.0.0', prefix: 4, name: 'multicast (RFC 5771)' },
  { net: '240.0.0.0', prefix: 4, name: 'reserved, and limited broadcast 255.255.255.255 (RFC 1112, RFC 919)' },
]

export const IPV6_REFUSED: readonly Range[] = [
  { net: '::', prefix: 128, name: 'unspecified (RFC 4291)' },
  { net: '::1', prefix: 128, name: 'loopback (RFC 4291)' },
  { net: '::ffff:0:0', prefix: 96, name: 'IPv4-mapped (RFC 4291)' },
  { net: '::', prefix: 96, name: 'deprecated IPv4-compatible (RFC 4291)' },
  { net: '64:ff9b:1::', prefix: 48, name: 'IPv4/IPv6 translation, local use (RFC 8215)' },
  { net: '100::', prefix: 64, name: 'discard-only (RFC 6666)' },
  { net: '100:0:0:1::', prefix: 64, name: 'dummy IPv6 prefix (RFC 9780)' },
  { net: '2001::', prefix: 23, name: 'IETF protocol assignments (RFC 2928)' },
  { net: '2001::', prefix: 32, name: 'Teredo (RFC 4380)' },
  { net: '2001:2::', prefix: 48, name: 'benchmarking (RFC 5180)' },
  { net: '2001:10::', prefix: 28, name: 'deprecated ORCHID (RFC 4843)' },
  { net: '2001:db8::', prefix: 32, name: 'documentation (RFC 3849)' },
  { net: '2002::', prefix: 16, name: '6to4 (RFC 3056)' },
  { net: '2620:4f:8000::', prefix: 48, name: 'direct delegation AS112 service (RFC 7534)' },
  { net: '3fff::', prefix: 20, name: 'documentation (RFC 9637)' },
  { net: '5f00::', prefix: 16, name: 'segment routing SRv6 SIDs (RFC 9602)' },
  { net: 'fc00::', prefix: 7, name: 'unique-local (RFC 4193)' },
  { net: 'fe80::', prefix: 10, name: 'link-local (RFC 4291)' },
  { net: 'fec0::', prefix: 10, name: 'deprecated site-local (RFC 3879)' },
  { net: 'ff00::', prefix: 8, name: 'multicast (RFC 4291)' },
]

/** NAT64's well-known prefix is global (RFC 6052): an address in it is as public as the IPv4 address it carries. */
const NAT64 = { net: '64:ff9b::', prefix: 96 }
/** IANA's IPv6 address space: only 2000::/3 is global unicast; everything else is reserved or special. */
const GLOBAL_UNICAST = { net: '2000::', prefix: 3 }

// Two lists: a BlockList also matches an IPv4 address against its IPv6 rules as `::ffff:a.b.c.d`, which the
// IPv4-mapped rule would refuse.
const refusedV4 = new BlockList()
for (const r of IPV4_REFUSED) refusedV4.addSubnet(r.net, r.prefix, 'ipv4')
const refusedV6 = new BlockList()
for (const r of IPV6_REFUSED) refusedV6.addSubnet(r.net, r.prefix, 'ipv6')
const nat64 = new BlockList()
nat64.addSubnet(NAT64.net, NAT64.prefix, 'ipv6')
const globalUnicast = new BlockList()
globalUnicast.addSubnet(GLOBAL_UNICAST.net, GLOBAL_UNICAST.prefix, 'ipv6')
const loopback = new BlockList()
loopback.addSubnet('127.0.0.0', 8, 'ipv4')
loopback.addAddress('::1', 'ipv6')

/** The IPv4 address in the last 32 bits of an IPv6 address. */
function embeddedIpv4(ip: string): string | null {
  const tail = ip.slice(ip.lastIndexOf(':') + 1)
  if (isIPv4(tail)) return tail
  const groups = ip.split(':')
  const lo = parseInt(groups.at(-1) || '0', 16)
  const hi = parseInt(groups.at(-2) || '0', 16)
  if (!Number.isInteger(lo) || !Number.isInteger(hi)) return null
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`
}

/** Whether a resolved address (IPv4 dotted or IPv6, no brackets) is globally reachable unicast. */
export function isGlobalAddress(ip: string): boolean {
  if (isIPv4(ip)) return !refusedV4.check(ip, 'ipv4')
  if (!isIPv6(ip)) return false
  if (nat64.check(ip, 'ipv6')) {
    const v4 = embeddedIpv4(ip)
    return v4 !== null && isGlobalAddress(v4)
  }
  return globalUnicast.check(ip, 'ipv6') && !refusedV6.check(ip, 'ipv6')
}

/** What a resolved name may connect to: global addresses, and loopback when a test or local development admits it. */
export function isFetchableAddress(ip: string, opts: { allowLoopback: boolean }): boolean {
  if (isGlobalAddress(ip)) return true
  return opts.allowLoopback && (isIPv4(ip) ? loopback.check(ip, 'ipv4') : isIPv6(ip) && loopback.check(ip, 'ipv6'))
}
