/**
 * The media store through the Worker: a relay uploads an item under its lease and sends the message; the message
 * carries a signed media.url that works without a key, refuses a tampered (403) or expired (410) link, serves byte
 * ranges; GET /v1/media/{id} answers the tenant's key and 404s another tenant's; an item over the cap is stored as a
 * message marked too large; retention (injected clock) and account removal delete the objects.
 */
import { env, exports } from 'cloudflare:workers'
import { describe, expect, it } from 'vitest'
import { database } from '../../../worker/db/client'
import { mediaIdFor, mediaKey } from '../../../worker/media/ids'
import { signedMediaUrl } from '../../../worker/media/links'
import { sweepExpiredMedia } from '../../../worker/media/retention'
import { body, call, newTenant, ORIGIN, type TestTenant } from '../helpers'
import { closeRelaysAfterEach, linkedAlphaAccount } from '../relay-helpers'

const relays = closeRelaysAfterEach()

const linkedAccount = () => linkedAlphaAccount(relays, '1667')

type Linked = Awaited<ReturnType<typeof linkedAccount>>

function upload(a: Linked, upstreamId: string, bytes: Uint8Array, meta: { type: string; kind: string; name?: string; declared?: number; fence?: number }) {
  const headers: Record<string, string> = {
    Authorization: `Bearer ${a.token}`,
    'Content-Type': meta.type,
    'x-media-fence': String(meta.fence ?? a.assign.fence),
    'x-media-kind': meta.kind,
    'x-media-size': String(meta.declared ?? bytes.byteLength),
  }
  if (meta.name) headers['x-media-file-name'] = encodeURIComponent(meta.name)
  const tooLarge = meta.declared !== undefined && meta.declared !== bytes.byteLength
  return exports.default.fetch(new Request(`${ORIGIN}/relay/media/${a.assign.sid}/${upstreamId}`, { method: 'PUT', headers, body: tooLarge ? null : bytes }))
}

async function inboundWithMedia(
  a: Linked,
  upstreamId: string,
  up: { media_id: string; url: string; status: string; reason: string | null; size: number },
  meta: { type: string; kind: 'image' | 'video'; name?: string }
) {
  return a.relay.request({
    type: 'inbound',
    id: a.relay.id(),
    sid: a.assign.sid,
    fence: a.assign.fence,
    message: {
      upstreamId,
      from: { id: '447700900123@s.whatsapp.net', phone: '+447700900123', lid: null, name: 'Ada' },
      text: '',
      media: {
        url: up.url,
        contentType: meta.type,
        stored: { kind: meta.kind, size: up.size, fileName: meta.name ?? null, tooLarge: up.status === 'too_large' ? up.reason : null },
      },
      sentAt: Date.now(),
    },
  })
}

type WireMedia = {
  url: string
  content_type: string | null
  id: string
  kind: string
  size: number
  file_name: string | null
  too_large: boolean
  reason: string | null
}

async function lastMessage(t: TestTenant) {
  const list = await body<{ messages: Array<{ media: WireMedia | null; text: string }> }>(await call('/v1/messages', { key: t.key }))
  return list.messages[0]!
}

const photo = Uint8Array.from({ length: 5000 }, (_, i) => (i * 7) % 256)

async function storedPhoto() {
  const a = await linkedAccount()
  const res = await upload(a, 'UPPHOTO', photo, { type: 'image/jpeg', kind: 'image', name: 'cat.jpg' })
  expect(res.status).toBe(200)
  const up = await body<{ media_id: string; url: string; status: string; reason: string | null; size: number }>(res)
  expect(up).toMatchObject({ status: 'stored', size: photo.byteLength })
  expect(await inboundWithMedia(a, 'UPPHOTO', up, { type: 'image/jpeg', kind: 'image', name: 'cat.jpg' })).toMatchObject({ type: 'ack' })
  const m = await lastMessage(a.t)
  return { a, up, media: m.media! }
}

function fetchUrl(url: string, init: RequestInit = {}) {
  return exports.default.fetch(new Request(url, init))
}

describe('relay upload and the message', () => {
  it('stores the bytes and gives the message a signed media.url with the kept facts', async () => {
    const { a, up, media } = await storedPhoto()
    expect(media).toMatchObject({ id: up.media_id, content_type: 'image/jpeg', kind: 'image', size: 5000, file_name: 'cat.jpg', too_large: false })
    // The link names its tenant, so the public media route finds the tenant's shard without a key.
    expect(media.url).toMatch(new RegExp(`^${ORIGIN}/media/${up.media_id}\\?tenant=${a.t.tenantId}&expires=\\d+&signature=[0-9a-f]{64}$`))
  })

  it('derives the id from the message, so an upload repeated after a crash names the same item and one message', async () => {
    const { a, up } = await storedPhoto()
    const again = await body<{ media_id: string }>(await upload(a, 'UPPHOTO', photo, { type: 'image/jpeg', kind: 'image', name: 'cat.jpg' }))
    expect(again.media_id).toBe(up.media_id)
    expect(up.media_id).toBe(await mediaIdFor(a.t.tenantId, a.phone, 'UPPHOTO'))
    expect(await inboundWithMedia(a, 'UPPHOTO', up, { type: 'image/jpeg', kind: 'image' })).toMatchObject({ type: 'ack' })
    expect((await body<{ messages: unknown[] }>(await call('/v1/messages', { key: a.t.key }))).messages).toHaveLength(1)
  })

  it('refuses an upload without a relay token (401) or under a fence the relay does not hold (409)', async () => {
    const a = await linkedAccount()
    const noToken = await exports.default.fetch(new Request(`${ORIGIN}/relay/media/${a.assign.sid}/X`, { method: 'PUT', body: 'x' }))
    expect(noToken.status).toBe(401)
    expect((await upload(a, 'X', photo, { type: 'image/jpeg', kind: 'image', fence: a.assign.fence + 1 })).status).toBe(409)
    const other = await linkedAccount()
    const foreign = await exports.default.fetch(
      new Request(`${ORIGIN}/relay/media/${a.assign.sid}/X`, {
        method: 'PUT',
        headers: { Authorization: `Bearer ${other.token}`, 'x-media-fence': String(a.assign.fence), 'x-media-kind': 'image', 'x-media-size': '3' },
        body: 'abc',
      })
    )
    expect(foreign.status).toBe(409)
  })

  it('stores an item over the cap as a message marked too large with the reason, without its bytes', async () => {
    const a = await linkedAccount()
    const declared = 64 * 1024 * 1024 + 1
    const res = await upload(a, 'UPBIG', new Uint8Array(0), { type: 'video/mp4', kind: 'video', name: 'big.mp4', declared })
    const up = await body<{ media_id: string; url: string; status: string; reason: string | null; size: number }>(res)
    expect(up).toMatchObject({ status: 'too_large', size: declared })
    expect(up.reason).toContain('cap')
    expect(await inboundWithMedia(a, 'UPBIG', up, { type: 'video/mp4', kind: 'video', name: 'big.mp4' })).toMatchObject({ type: 'ack' })
    const m = await lastMessage(a.t)
    expect(m.media).toMatchObject({ id: up.media_id, too_large: true, kind: 'video', size: declared })
    expect(m.media!.reason).toContain('cap')
    expect(await env.MEDIA.head(mediaKey(a.t.tenantId, a.phone, up.media_id))).toBeNull()
    const get = await call(`/v1/media/${up.media_id}`, { key: a.t.key })
    expect(get.status).toBe(413)
    expect((await body<{ error: string }>(get)).error).toContain('cap')
  })
})

describe('GET /media/{id} (signed link)', () => {
  it('serves the bytes and content type without an API key', async () => {
    const { media } = await storedPhoto()
    const res = await fetchUrl(media.url)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('image/jpeg')
    expect(new Uint8Array(await res.arrayBuffer())).toEqual(photo)
  })

  it('serves a byte range as 206 with Content-Range, a suffix range, and 416 outside the item', async () => {
    const { media } = await storedPhoto()
    const part = await fetchUrl(media.url, { headers: { Range: 'bytes=100-199' } })
    expect(part.status).toBe(206)
    expect(part.headers.get('content-range')).toBe('bytes 100-199/5000')
    expect(new Uint8Array(await part.arrayBuffer())).toEqual(photo.slice(100, 200))
    const tail = await fetchUrl(media.url, { headers: { Range: 'bytes=-10' } })
    expect(tail.headers.get('content-range')).toBe('bytes 4990-4999/5000')
    expect(new Uint8Array(await tail.arrayBuffer())).toEqual(photo.slice(4990))
    const outside = await fetchUrl(media.url, { headers: { Range: 'bytes=6000-' } })
    expect(outside.status).toBe(416)
    expect(outside.headers.get('content-range')).toBe('bytes */5000')
  })

  it('refuses a tampered signature with 403 and an id swapped into a valid link with 403', async () => {
    const { media } = await storedPhoto()
    const tampered = media.url.replace(/signature=([0-9a-f])/, (_, c: string) => `signature=${c === '0' ? '1' : '0'}`)
    expect((await fetchUrl(tampered)).status).toBe(403)
    const longer = media.url.replace(/expires=(\d+)/, (_, e: string) => `expires=${Number(e) + 3600}`)
    expect((await fetchUrl(longer)).status).toBe(403)
    expect((await fetchUrl(media.url.replace(/\?.*$/, ''))).status).toBe(403)
  })

  it('refuses an expired link with 410 (a link signed with an earlier clock)', async () => {
    const { a, up } = await storedPhoto()
    const past = await signedMediaUrl('test-encryption-key', ORIGIN, a.t.tenantId, up.media_id, Date.now() - 1000)
    const res = await fetchUrl(past)
    expect(res.status).toBe(410)
    expect((await body<{ error: string }>(res)).error).toContain('expired')
  })
})

describe('GET /v1/media/{mediaId}', () => {
  it('answers the bytes to the tenant key, with Range, and a fresh link from /link', async () => {
    const { a, up } = await storedPhoto()
    const res = await call(`/v1/media/${up.media_id}`, { key: a.t.key })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('image/jpeg')
    expect(new Uint8Array(await res.arrayBuffer())).toEqual(photo)
    const part = await call(`/v1/media/${up.media_id}`, { key: a.t.key, headers: { Range: 'bytes=0-9' } })
    expect(part.status).toBe(206)
    expect(new Uint8Array(await part.arrayBuffer())).toEqual(photo.slice(0, 10))
    const link = await body<{ url: string; expires_at: string; size: number }>(await call(`/v1/media/${up.media_id}/link`, { key: a.t.key }))
    expect(link.size).toBe(5000)
    expect(Date.parse(link.expires_at) - Date.now()).toBeGreaterThan(23 * 3600_000)
    expect((await fetchUrl(link.url)).status).toBe(200)
  })

  it("answers 404 to another tenant's key, to an unknown id, and 401 without a key", async () => {
    const { up } = await storedPhoto()
    const other = await newTenant()
    expect((await call(`/v1/media/${up.media_id}`, { key: other.key })).status).toBe(404)
    expect((await call(`/v1/media/${up.media_id}/link`, { key: other.key })).status).toBe(404)
    expect((await call(`/v1/media/med_000000000000000000000000`, { key: other.key })).status).toBe(404)
    expect((await call(`/v1/media/${up.media_id}`)).status).toBe(401)
    expect((await call(`/v1/media/not-an-id`, { key: other.key })).status).toBe(400)
  })
})

describe('retention and removal', () => {
  it('deletes items older than the retention period and keeps newer ones (injected clock)', async () => {
    const { up, media } = await storedPhoto()
    const db = database(env.DB)
    const day = 24 * 3600_000
    expect(await sweepExpiredMedia(env.MEDIA, db, 30 * day, Date.now() + 29 * day)).toBe(0)
    expect((await fetchUrl(media.url)).status).toBe(200)
    expect(await sweepExpiredMedia(env.MEDIA, db, 30 * day, Date.now() + 31 * day)).toBeGreaterThanOrEqual(1)
    expect((await fetchUrl(media.url)).status).toBe(404)
    const row = await env.DB.prepare('SELECT id FROM media WHERE id = ?').bind(up.media_id).first()
    expect(row).toBeNull()
  })

  it('removes the media of an alpha number when the number is removed', async () => {
    const { a, up, media } = await storedPhoto()
    const res = await call(`/v1/channels/alpha-web/connections/${encodeURIComponent(a.phone)}`, { method: 'DELETE', key: a.t.key })
    expect(res.status).toBe(200)
    expect(await env.MEDIA.head(mediaKey(a.t.tenantId, a.phone, up.media_id))).toBeNull()
    expect((await fetchUrl(media.url)).status).toBe(404)
    expect((await call(`/v1/media/${up.media_id}`, { key: a.t.key })).status).toBe(404)
  })
})
