/**
 * What every hosted page that links one account shares (alpha's QR page, beta's login page; spec part 8): a signed,
 * expiring `token` naming tenant and account is the only permission (no login, no API key), a refused token is 403
 * and a lapsed one 410, and the answers are never cached, never leak the URL as a referrer and run only their own
 * nonce'd script.
 */
import { z } from 'zod'
import { encryptionKey, publicOrigin } from '../config'
import { ApiError } from '../errors'
import { signToken, verifyToken } from '../lib/signed-token'

export const PageClaims = z.object({ tenant: z.string(), account: z.string() })
export type PageClaims = z.infer<typeof PageClaims>

/** A page opened with a good token: whose account, and until when the link works. */
export type PageAccess = { claims: PageClaims; expiresAt: number }

export type AccountPage = {
  readonly path: string
  /** The link to hand the user (`connect_url`) and when it lapses (`connect_url_expires_at`). */
  link(env: Env, requestUrl: string, claims: PageClaims, now: number): Promise<{ url: string; expiresAt: number }>
  /** The claims of a request's token, or the ApiError the page answers with (403 invalid_token, 410 link_expired). */
  open(env: Env, token: string | undefined, now: number): Promise<PageAccess>
}

/** One page: `purpose` keeps its tokens worthless for any other page, `ttlMs` is its link life. */
export function accountPage(purpose: string, path: string, ttlMs: (env: Env) => number): AccountPage {
  return {
    path,
    async link(env, requestUrl, claims, now) {
      const expiresAt = now + ttlMs(env)
      const token = await signToken(encryptionKey(env), purpose, claims, expiresAt)
      return { url: `${publicOrigin(env, requestUrl)}${path}?token=${encodeURIComponent(token)}`, expiresAt }
    },
    async open(env, token, now) {
      if (!token) throw new ApiError(403, 'invalid_token', 'This link is incomplete: the token is missing')
      const check = await verifyToken(encryptionKey(env), purpose, token, PageClaims, now)
      if (check.ok) return { claims: check.payload, expiresAt: check.expiresAt }
      if (check.reason === 'expired') throw new ApiError(410, 'link_expired', 'This link has expired; ask for a new one')
      throw new ApiError(403, 'invalid_token', 'This link is not valid')
    },
  }
}

/** Every answer of a hosted page: not cached, not sent on as a referrer. */
export const PAGE_HEADERS = { 'Cache-Control': 'no-store', 'Referrer-Policy': 'no-referrer', 'X-Content-Type-Options': 'nosniff' }

/** The page document's CSP: its own inline script (by nonce) and styles, data: images, fetches to itself only. */
export function pageCsp(nonce: string): string {
  return `default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'nonce-${nonce}'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`
}

/** The number as the page shows it: enough to recognise, not enough to harvest. */
export function maskPhone(phone: string): string {
  return phone.length <= 7 ? phone : `${phone.slice(0, 4)}${'•'.repeat(phone.length - 7)}${phone.slice(-3)}`
}
