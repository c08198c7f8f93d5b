/**
 * The one-time token of an alpha passkey ceremony (docs/channels/alpha.md, "When the phone asks for a passkey"): signed
 * like the connect page's, for its own purpose, naming the tenant, the number and the ceremony (its challenge), and
 * lapsing when the relay stops waiting for the assertion. The AccountDO spends it on the first assertion
 * (account/session/passkey.ts), so a second use is a replay whatever the signature says.
 */
import { z } from 'zod'
import { encryptionKey, publicOrigin } from '../../config'
import { ApiError } from '../../errors'
import { signToken, verifyToken } from '../../lib/signed-token'

const PURPOSE = 'alpha-passkey-ceremony'

export const PASSKEY_API_PATH = '/connect/alpha-web/passkey'

const Claims = z.object({ tenant: z.string(), account: z.string(), ceremony: z.string() })
export type CeremonyClaims = z.infer<typeof Claims>

/**
 * The passkey link the owner pastes into the helper on web.whatsapp.com: the ceremony API's URL with the token as
 * its fragment, so the helper learns both from one string and the token never reaches a server log as part of a URL.
 */
export async function ceremonyLink(env: Env, requestUrl: string, claims: CeremonyClaims, expiresAt: number): Promise<string> {
  const token = await signToken(encryptionKey(env), PURPOSE, claims, expiresAt)
  return `${publicOrigin(env, requestUrl)}${PASSKEY_API_PATH}#${token}`
}

/** The claims of `Authorization: Bearer <token>`, or the refusal (403 a wrong token, 410 a lapsed one). */
export async function openCeremony(env: Env, authorization: string | undefined, now: number): Promise<CeremonyClaims> {
  const token = /^Bearer\s+(\S+)$/i.exec(authorization ?? '')?.[1]
  if (!token) throw new ApiError(401, 'invalid_token', 'Send the passkey link’s token as Authorization: Bearer')
  const check = await verifyToken(encryptionKey(env), PURPOSE, token, Claims, now)
  if (check.ok) return check.payload
  if (check.reason === 'expired') throw new ApiError(410, 'passkey_expired', 'This passkey link has expired; start linking again on the connect page')
  throw new ApiError(403, 'invalid_token', 'This passkey link is not valid')
}
