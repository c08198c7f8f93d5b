/**
 * Signs the media of wire messages and webhook payloads at the moment they leave (a list, a wait answer, a webhook
 * attempt): stored messages keep the unsigned address, so every answer carries a link that is fresh for its full
 * life (MEDIA_LINK_TTL_S), and a replayed webhook does not carry a dead one.
 */
import { encryptionKey, mediaConfig, mediaOrigin } from '../config'
import { mediaIdOfUrl, signedMediaUrl } from './links'

type WithMedia = { media: { url: string; id?: string | null } | null }

export type MediaSigner = (url: string) => Promise<string>

/**
 * Signs the tenant's media links. Links are built on MEDIA_BASE_URL when it is set (a separate media origin), else on
 * the origin stored with the item.
 */
export function mediaSigner(env: Env, tenantId: string, now: number): MediaSigner {
  const expiresAt = now + mediaConfig(env).linkTtlMs
  return async (url) => {
    const id = mediaIdOfUrl(url)
    if (!id) return url
    const origin = env.MEDIA_BASE_URL ? mediaOrigin(env) : url.slice(0, url.indexOf('/media/'))
    return signedMediaUrl(encryptionKey(env), origin, tenantId, id, expiresAt)
  }
}

/** Replaces each stored media address by a signed link, in place; links of other hosts (custom channel) stay. */
export async function signMessages<T extends WithMedia>(sign: MediaSigner, messages: T[]): Promise<T[]> {
  for (const m of messages) if (m.media?.id) m.media.url = await sign(m.media.url)
  return messages
}

/** The stored webhook body with its message's media link signed; bodies without store media come back as they are. */
export async function signPayload(sign: MediaSigner, body: string): Promise<string> {
  if (!body.includes('"/media/med_') && !body.includes('/media/med_')) return body
  let json: unknown
  try {
    json = JSON.parse(body)
  } catch {
    return body
  }
  if (typeof json !== 'object' || json === null || !('message' in json)) return body
  const message = json.message
  if (typeof message !== 'object' || message === null || !('media' in message)) return body
  const media = message.media
  if (typeof media !== 'object' || media === null || !('url' in media) || typeof media.url !== 'string' || !('id' in media) || !media.id) return body
  media.url = await sign(media.url)
  return JSON.stringify(json)
}
