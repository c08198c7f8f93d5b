// The Worker's outbound fetch() under `npm start`. wrangler dev (Miniflare) lets the Worker reach public and private
// addresses, so a name that resolves to a private one (127.0.0.1.nip.io, localtest.me) would reach this machine's
// services; the URL check in common/public-url.ts sees only the name. Every outbound request comes here instead
// (wrangler's dev.outboundService): the name is resolved, every address must be public, and the connection goes to
// the address that was checked, so a second DNS answer (rebinding) cannot change where it lands.
import { lookup as dnsLookup } from 'node:dns/promises'
import { request as httpRequest } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { isIP } from 'node:net'
import { Readable } from 'node:stream'
import { isFetchableAddress, isGlobalAddress } from '../common/address-ranges.ts'

/** What a refused request answers: the Worker's callers count any non-2xx as a failed delivery. */
export const REFUSED_STATUS = 502
export const REFUSED_HEADER = 'x-outbound-guard'

/** RFC 6761: `localhost` and names under it are loopback, as common/public-url.ts treats them. */
function isLocalhostName(host) {
  return host === 'localhost' || host.endsWith('.localhost')
}

function isLoopbackAddress(ip) {
  return !isGlobalAddress(ip) && isFetchableAddress(ip, { allowLoopback: true })
}

/** The addresses a name has, as node:dns reports them with `all: true`. */
async function resolveAll(hostname) {
  return dnsLookup(hostname, { all: true, verbatim: true })
}

class Refused extends Error {}

/**
 * @typedef {object} OutboundGuardOptions
 * @property {boolean} [allowLoopback] ALLOW_LOOPBACK_URLS: loopback literals (127.0.0.0/8, ::1) and localhost names
 *   pass, as the Worker's URL check admits them for local receivers. Other names must still resolve to public addresses.
 * @property {(hostname: string) => Promise<Array<{address: string, family: number}>>} [resolve] Tests only: a
 *   resolver (this machine resolves nothing offline).
 * @property {(ip: string) => boolean} [isAllowedAddress] Tests only: which resolved addresses count as public.
 * @property {import('node:tls').SecureContextOptions} [tls] Tests only: e.g. `{ ca }` for a local https receiver.
 */

/**
 * Resolves a host once and checks every address it has; the answer is what the socket then connects to. Throws
 * (a Refused error) when any address is not public.
 * @param {string} hostname without IPv6 brackets
 * @param {OutboundGuardOptions} [opts]
 */
export async function checkedAddresses(hostname, opts = {}) {
  const allowLoopback = opts.allowLoopback ?? false
  const isAllowedAddress = opts.isAllowedAddress ?? isGlobalAddress
  const literal = isIP(hostname)
  if (literal) {
    if (isAllowedAddress(hostname) || (allowLoopback && isLoopbackAddress(hostname))) return [{ address: hostname, family: literal }]
    throw new Refused(`${hostname} is not a public address`)
  }
  const loopbackName = allowLoopback && isLocalhostName(hostname)
  const addresses = await (opts.resolve ?? resolveAll)(hostname)
  if (addresses.length === 0) throw new Refused(`${hostname} has no address`)
  // One private address is enough to refuse: the connection could pick any of them.
  const bad = addresses.find((a) => !(isAllowedAddress(a.address) || (loopbackName && isLoopbackAddress(a.address))))
  if (bad) throw new Refused(`${hostname} resolves to ${bad.address}, which is not public`)
  return addresses
}

/**
 * The outbound service wrangler calls with each of the Worker's subrequests.
 * @param {OutboundGuardOptions} [opts]
 * @returns {(request: Request) => Promise<Response>}
 */
export function createOutboundGuard(opts = {}) {
  return async function outbound(request) {
    const url = new URL(request.url)
    const hostname = url.hostname.replace(/^\[(.*)\]$/, '$1')
    const send = url.protocol === 'https:' ? httpsRequest : url.protocol === 'http:' ? httpRequest : null
    let addresses
    try {
      if (!send) throw new Refused(`${url.protocol} is not http(s)`)
      addresses = await checkedAddresses(hostname, opts)
    } catch (err) {
      if (!(err instanceof Refused)) throw err
      return new Response(`outbound request refused: ${err.message}`, { status: REFUSED_STATUS, headers: { [REFUSED_HEADER]: 'refused' } })
    }
    // The socket asks for the name again; it gets the checked answer, never a fresh one.
    const lookup = (_name, options, callback) => {
      if (options?.all) return callback(null, addresses)
      callback(null, addresses[0].address, addresses[0].family)
    }
    const headers = {}
    for (const [name, value] of request.headers) headers[name] = value
    const body = request.body ? Buffer.from(await request.arrayBuffer()) : null
    if (body) headers['content-length'] = String(body.length)
    delete headers['transfer-encoding']

    return new Promise((resolvePromise, reject) => {
      const req = send(url, { method: request.method, headers, lookup, signal: request.signal, ...opts.tls }, (res) => {
        const out = new Headers()
        for (let i = 0; i < res.rawHeaders.length; i += 2) out.append(res.rawHeaders[i], res.rawHeaders[i + 1])
        const status = res.statusCode ?? 502
        const empty = request.method === 'HEAD' || [101, 103, 204, 205, 304].includes(status)
        if (empty) res.resume()
        resolvePromise(new Response(empty ? null : Readable.toWeb(res), { status, statusText: res.statusMessage, headers: out }))
      })
      req.on('error', reject)
      req.end(body ?? undefined)
    })
  }
}
