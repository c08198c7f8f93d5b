/** The signed `token` of the hosted connect page: which account it links, valid for CONNECT_PAGE_TTL_MS. */
import { z } from 'zod'
import { connectPageTtlMs, encryptionKey, publicOrigin } from '../../config'
import { signToken, verifyToken, type TokenCheck } from '../../lib/signed-token'

const PURPOSE = 'alpha-connect-page'
export const CONNECT_PAGE_PATH = '/connect/alpha-web'

export const ConnectClaims = z.object({ tenant: z.string(), account: z.string() })
export type ConnectClaims = z.infer<typeof ConnectClaims>

export async function connectUrl(env: Env, requestUrl: string, claims: ConnectClaims, now: number): Promise<{ url: string; expiresAt: number }> {
  const expiresAt = now + connectPageTtlMs(env)
  const token = await signToken(encryptionKey(env), PURPOSE, claims, expiresAt)
  return { url: `${publicOrigin(env, requestUrl)}${CONNECT_PAGE_PATH}?token=${encodeURIComponent(token)}`, expiresAt }
}

export function readConnectToken(env: Env, token: string, now: number): Promise<TokenCheck<ConnectClaims>> {
  return verifyToken(encryptionKey(env), PURPOSE, token, ConnectClaims, now)
}
