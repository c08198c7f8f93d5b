/**
 * The one SSRF guard for every URL the gateway will call on a user's behalf (custom channel webhook, webhook
 * subscriptions, media URLs). Production accepts only public https hostnames; the dev-only ALLOW_LOOPBACK_URLS
 * setting additionally lets http(s) loopback URLs through so a local receiver can be used.
 *
 * Workers cannot resolve DNS and pin the answer, so this checks the URL itself (scheme, userinfo, IP literals in
 * every encoding the WHATWG parser normalises, internal names, ports, our own hosts) and relies on the platform's
 * egress isolation for names that resolve to private space. Delivery code never follows redirects.
 */
export type UrlCheck = { ok: true; url: URL } | { ok: false; reason: string }

export type UrlPolicy = {
  /** Dev only: accept http and https URLs whose host is loopback (127.0.0.0/8, ::1, localhost). */
  allowLoopback: boolean
  /** Hostnames of this service; a URL pointing back at us is refused (request loops, auth bypass). */
  ownHosts: string[]
  /**
   * The operator's own internal names and domains (INTERNAL_URL_HOSTS), refused with everything under them, on top of
   * INTERNAL_DOMAINS. The relay leaves it out: it resolves names and checks every address instead.
   */
  internalHosts?: string[]
}

const MAX_URL_LENGTH = 2048
const ALLOWED_HTTPS_PORTS = new Set(['', '443', '8443'])
/** RFC 6761: `localhost` and every name under it are loopback. */
const LOOPBACK_DOMAIN = 'localhost'
/**
 * Names that are never a public host, whatever the deployment: special-use and customary private domains and the
 * cloud metadata names, each with everything under it. A floor in code: configuration can add to it
 * (UrlPolicy.internalHosts), never take from it, so no setting opens the guard to internal services.
 */
const INTERNAL_DOMAINS = [LOOPBACK_DOMAIN, 'local', 'internal', 'lan', 'home.arpa', 'intranet', 'corp', 'metadata', 'instance-data']

/** Lower case, no trailing or leading dot: how hosts are compared. */
export function normalizeHost(host: string): string {
  return host
    .trim()
    .toLowerCase()
    .replace(/^\.+|\.+$/g, '')
}

/** The host is one of `domains` or a name under one of them. */
function underAny(host: string, domains: readonly string[]): boolean {
  return domains.some((d) => d !== '' && (host === d || host.endsWith(`.${d}`)))
}

/** IPv4 ranges that are not publicly routable (RFC 6890 and friends), as [network, prefix length, label]. */
const IPV4_BLOCKED: Array<[string, number, string]> = [
  ['0.0.0.0', 8, 'this-network'],
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'carrier-grade NAT'],
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link-local (cloud metadata)'],
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'IETF protocol assignments'],
  ['192.0.2.0', 24, 'documentation'],
  ['192.88.99.0', 24, '6to4 relay'],
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'benchmarking'],
  ['198.51.100.0', 24, 'documentation'],
  ['203.0.113.0', 24, 'documentation'],
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved'],
]

function ipv4ToInt(ip: string): number | null {
  const parts = ip.split('.')
  if (parts.length !== 4) return null
  let n = 0
  for (const p of parts) {
    if (!/^\d{1,3}$/.test(p) || Number(p) > 255) return null
    n = n * 256 + Number(p)
  }
  return n
}

function ipv4Class(ip: string): string | null {
  const n = ipv4ToInt(ip)
  if (n === null) return null
  for (const [net, bits, label] of IPV4_BLOCKED) {
    const size = 2 ** (32 - bits)
    const base = ipv4ToInt(net) as number
    if (n >= base && n < base + size) return label
  }
  return 'public'
}

/** Expands an IPv6 literal (without brackets, as the URL parser prints it) into eight 16-bit groups. */
function ipv6Groups(ip: string): number[] | null {
  const [head = '', tail] = ip.split('::')
  if (ip.split('::').length > 2) return null
  const parse = (s: string) => (s === '' ? [] : s.split(':').map((g) => parseInt(g, 16)))
  const h = parse(head)
  const t = tail === undefined ? [] : parse(tail)
  const fill = tail === undefined ? 0 : 8 - h.length - t.length
  const groups = [...h, ...Array<number>(Math.max(0, fill)).fill(0), ...t]
  return groups.length === 8 && groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : null
}

function ipv6Class(ip: string): string {
  const g = ipv6Groups(ip)
  if (!g) return 'malformed'
  const [a = 0, b = 0] = g
  const embeddedV4 = () => `${(g[6]! >> 8) & 255}.${g[6]! & 255}.${(g[7]! >> 8) & 255}.${g[7]! & 255}`
  if (g.every((x) => x === 0)) return 'unspecified'
  if (g.slice(0, 7).every((x) => x === 0) && g[7] === 1) return 'loopback'
  // IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d) and NAT64 (64:ff9b::a.b.c.d) carry an IPv4 address.
  if (g.slice(0, 5).every((x) => x === 0) && (g[5] === 0xffff || g[5] === 0)) return ipv4Class(embeddedV4()) ?? 'malformed'
  if (a === 0x64 && b === 0xff9b) return ipv4Class(embeddedV4()) ?? 'malformed'
  if ((a & 0xfe00) === 0xfc00) return 'unique-local (private)'
  if ((a & 0xffc0) === 0xfe80) return 'link-local'
  if ((a & 0xff00) === 0xff00) return 'multicast'
  if (a === 0x2001 && b === 0x0db8) return 'documentation'
  if (a === 0x2002) return '6to4'
  return 'public'
}

function isLoopbackHost(host: string): boolean {
  if (underAny(host, [LOOPBACK_DOMAIN])) return true
  if (host.startsWith('[')) return ipv6Class(host.slice(1, -1)) === 'loopback'
  return ipv4Class(host) === 'loopback'
}

/**
 * Whether a resolved IP address (v4 dotted or v6, no brackets) is publicly routable. The Worker cannot resolve names,
 * but the Node relay can: it checks every address a media host resolves to before connecting (DNS rebinding).
 */
export function isPublicAddress(ip: string, opts: { allowLoopback: boolean } = { allowLoopback: false }): boolean {
  const cls = ip.includes(':') ? ipv6Class(ip) : ipv4Class(ip)
  return cls === 'public' || (opts.allowLoopback && cls === 'loopback')
}

export function checkPublicUrl(raw: string, policy: UrlPolicy): UrlCheck {
  if (raw.length > MAX_URL_LENGTH) return { ok: false, reason: `URL is longer than ${MAX_URL_LENGTH} characters` }
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return { ok: false, reason: 'not a valid absolute URL' }
  }
  if (url.username || url.password) return { ok: false, reason: 'credentials in the URL (user:pass@) are not accepted' }
  const host = normalizeHost(url.hostname)

  if (policy.allowLoopback && isLoopbackHost(host) && (url.protocol === 'http:' || url.protocol === 'https:')) {
    return { ok: true, url }
  }
  if (url.protocol !== 'https:') return { ok: false, reason: 'only https URLs are accepted' }
  if (!ALLOWED_HTTPS_PORTS.has(url.port)) return { ok: false, reason: 'only the standard https ports (443, 8443) are accepted' }

  if (host.startsWith('[')) {
    const cls = ipv6Class(host.slice(1, -1))
    return { ok: false, reason: cls === 'public' ? 'IP addresses are not accepted; use a hostname' : `the address is ${cls}, not public` }
  }
  const v4 = ipv4Class(host)
  if (v4 !== null) {
    return { ok: false, reason: v4 === 'public' ? 'IP addresses are not accepted; use a hostname' : `the address is ${v4}, not public` }
  }
  // A last label that is all digits or hex means the parser saw a number it did not turn into an address.
  if (/^(0x[0-9a-f]+|\d+)$/.test(host.split('.').at(-1) ?? '')) return { ok: false, reason: 'numeric hostnames are not accepted' }
  if (!host.includes('.')) return { ok: false, reason: 'single-label hostnames are internal names' }
  if (underAny(host, INTERNAL_DOMAINS) || underAny(host, (policy.internalHosts ?? []).map(normalizeHost))) {
    return { ok: false, reason: 'internal hostnames are not accepted' }
  }
  if (underAny(host, policy.ownHosts.map(normalizeHost))) {
    return { ok: false, reason: "the service's own hosts are not accepted" }
  }
  return { ok: true, url }
}
