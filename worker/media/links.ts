/**
 * Signed media links: `{origin}/media/{id}?tenant={tenant}&expires={unix s}&signature={hex}`, an HMAC-SHA256 over the
 * id, the expiry and the tenant under a key derived from ENCRYPTION_KEY for this purpose only. A link names one object
 * and works without an API key until it expires; anyone holding it can fetch the item, so it is as private as the
 * message it came in. The tenant says which shard holds the item's row (docs/ARCHITECTURE.md, "The data tier"); a
 * link signed before shards (no `tenant`) still checks, and its item is looked for on every shard.
 */
import { hmacSha256Hex, timingSafeEqual } from '../lib/crypto'
import { MEDIA_ID, mediaPath } from './ids'

const PURPOSE = 'media-link'

export type LinkCheck = { ok: true } | { ok: false; reason: 'bad_signature' | 'expired' }

/** A link's query: what checkMediaLink reads. */
export type LinkQuery = { tenant?: string | undefined; expires?: string | undefined; signature?: string | undefined }

function signatureFor(secret: string, mediaId: string, expiresS: number, tenantId: string | undefined): Promise<string> {
  const signed = tenantId === undefined ? `${mediaId}.${expiresS}` : `${mediaId}.${expiresS}.${tenantId}`
  return hmacSha256Hex(`${PURPOSE}\u0000${secret}`, signed)
}

export async function signedMediaUrl(secret: string, origin: string, tenantId: string, mediaId: string, expiresAtMs: number): Promise<string> {
  const expires = Math.floor(expiresAtMs / 1000)
  const q = new URLSearchParams({ tenant: tenantId, expires: String(expires), signature: await signatureFor(secret, mediaId, expires, tenantId) })
  return `${origin}${mediaPath(mediaId)}?${q}`
}

/** Checks a link's query; `now` is injected so expiry is tested without waiting. */
export async function checkMediaLink(secret: string, mediaId: string, q: LinkQuery, now: number): Promise<LinkCheck> {
  const { tenant, expires, signature } = q
  if (!MEDIA_ID.test(mediaId) || !expires || !/^\d{1,12}$/.test(expires) || !signature) return { ok: false, reason: 'bad_signature' }
  if (!timingSafeEqual(signature, await signatureFor(secret, mediaId, Number(expires), tenant))) return { ok: false, reason: 'bad_signature' }
  if (Number(expires) * 1000 <= now) return { ok: false, reason: 'expired' }
  return { ok: true }
}

/** The id a stored media URL names, when it is one of ours (`…/media/med_…`, with or without a query). */
export function mediaIdOfUrl(url: string): string | null {
  const m = /\/media\/(med_[0-9a-f]{24})(?:\?.*)?$/.exec(url)
  return m ? m[1]! : null
}
