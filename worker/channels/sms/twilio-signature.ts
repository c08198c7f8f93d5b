/**
 * `X-Twilio-Signature` (upstreams.md 3.1, twilio-node lib/webhooks/webhooks.js): base64 HMAC-SHA1 under the auth
 * token of the URL Twilio requested followed by every form parameter, keys sorted (JS default order), each key
 * followed by its value (a repeated key: its distinct values sorted). Accepted when it matches the URL as
 * configured, with the default port removed or added, as Twilio's own validateRequest does.
 */
import { timingSafeEqual } from '../../lib/crypto'

const encoder = new TextEncoder()

/** Form parameters as Twilio's helper sees them: a repeated key becomes an array. */
export function formParams(body: URLSearchParams): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {}
  for (const [k, v] of body) {
    const prev = out[k]
    out[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v]
  }
  return out
}

export async function twilioSignature(authToken: string, url: string, params: Record<string, string | string[]>): Promise<string> {
  let data = url
  for (const key of Object.keys(params).sort()) {
    const value = params[key]!
    if (Array.isArray(value)) for (const v of [...new Set(value)].sort()) data += key + v
    else data += key + value
  }
  const key = await crypto.subtle.importKey('raw', encoder.encode(authToken), { name: 'HMAC', hash: 'SHA-1' }, false, ['sign'])
  const sig = new Uint8Array(await crypto.subtle.sign('HMAC', key, encoder.encode(data)))
  let s = ''
  for (const b of sig) s += String.fromCharCode(b)
  return btoa(s)
}

/** The URL as given, without its port, and with the scheme's default port added (Twilio may sign either). */
export function urlVariants(raw: string): string[] {
  const u = new URL(raw)
  const defaultPort = u.protocol === 'https:' ? '443' : '80'
  const withoutPort = new URL(raw)
  withoutPort.port = ''
  const rest = (x: URL) => `${x.pathname}${x.search}`
  const withPort = `${u.protocol}//${u.username ? `${u.username}${u.password ? `:${u.password}` : ''}@` : ''}${u.hostname}:${u.port || defaultPort}${rest(u)}`
  return [...new Set([raw, withoutPort.toString(), withPort])]
}

export async function verifyTwilioSignature(
  authToken: string,
  header: string | undefined,
  url: string,
  params: Record<string, string | string[]>
): Promise<boolean> {
  if (!header) return false
  for (const candidate of urlVariants(url)) {
    if (timingSafeEqual(await twilioSignature(authToken, candidate, params), header)) return true
  }
  return false
}
