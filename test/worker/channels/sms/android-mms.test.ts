/**
 * Inbound MMS through the phone (`mms:downloaded` from the fake SMS gateway, signed as the phone signs it): the files
 * arrive base64 in the webhook body and are put into the media store before the message is queued, so the message
 * arrives with a `media.url` whose bytes and type are the sender's. Several files, a forged signature, a repeated
 * delivery, a file without content, and the route's body cap.
 */
import { env } from 'cloudflare:workers'
import { eq } from 'drizzle-orm'
import { describe, expect, it } from 'vitest'
import { media as mediaTable } from '../../../../schema/d1'
import { GATEWAY_WEBHOOK_MAX_BYTES } from '../../../../worker/channels/sms/gateway-mms'
import { mediaIdFor, mediaKey } from '../../../../worker/media/ids'
import { call, newTenant, type TestTenant } from '../../helpers'
import { db, eventsOf } from '../../state'
import { arrivedMessages, connectPhone, expectLinksServe, expectSignedLinkServes, gateway, inboundRows, post } from './sms-helpers'

const NUMBER = '+447700900123'
const FROM = '+447700900555'
const JPEG = Buffer.from('\xff\xd8\xff\xe0 a small jpeg from the phone \xff\xd9', 'latin1')
const PNG = Buffer.from('\x89PNG\r\n\x1a\n a small png from the phone', 'latin1')
const SMIL = '<smil><body><par><img src="photo.jpg"/></par></body></smil>'

type Listed = {
  id: string
  text: string
  contact: { phone: string }
  media: { url: string; id: string; content_type: string | null; kind: string; size: number | null; unavailable: boolean; too_large: boolean } | null
}

/** Waits until the account stored `n` inbound messages: the queue runs after the answer. */
const arrived = (t: TestTenant, n: number) => arrivedMessages<Listed>(t, n)

type File = { contentType: string; bytes?: Buffer; name?: string }

function payload(text: string, files: File[], messageId = `mms-${crypto.randomUUID()}`) {
  return {
    messageId,
    sender: FROM,
    recipient: NUMBER,
    simNumber: 1,
    body: text,
    subject: null,
    receivedAt: '2026-11-24T10:00:00.000+00:00',
    attachments: files.map((f, i) => ({
      partId: 100 + i,
      contentType: f.contentType,
      name: f.name ?? null,
      size: f.bytes?.length ?? 0,
      data: f.bytes ? f.bytes.toString('base64') : null,
    })),
  }
}

describe('inbound MMS from the phone', () => {
  it('stores a photo in the media store: the link serves the same bytes and type', async () => {
    const t = await newTenant()
    const p = await connectPhone(t)
    const w = await gateway.event(p.username, {
      event: 'mms:downloaded',
      payload: payload('look at this', [{ contentType: 'image/jpeg', bytes: JPEG, name: 'photo.jpg' }]),
    })
    expect((await post(w)).status).toBe(204)
    const [m] = await arrived(t, 1)
    expect(m).toMatchObject({
      text: 'look at this',
      contact: { phone: FROM },
      media: { content_type: 'image/jpeg', kind: 'image', size: JPEG.length, too_large: false, unavailable: false },
    })
    await expectSignedLinkServes(m!.media!.url, 'image/jpeg', JPEG)
    expect(await db.select().from(mediaTable).where(eq(mediaTable.id, m!.media!.id)).get()).toMatchObject({ fileName: 'photo.jpg', status: 'stored' })
    expect(await eventsOf(t.tenantId, 'message.received')).toHaveLength(1)
  })

  it('turns two files into two messages, the text on the first, and leaves out the SMIL layout part', async () => {
    const t = await newTenant()
    const p = await connectPhone(t)
    const files: File[] = [
      { contentType: 'application/smil', bytes: Buffer.from(SMIL) },
      { contentType: 'image/jpeg', bytes: JPEG },
      { contentType: 'image/png', bytes: PNG },
    ]
    const w = await gateway.event(p.username, { event: 'mms:downloaded', payload: payload('two pictures', files, 'mms-two') })
    expect((await post(w)).status).toBe(204)
    const list = await arrived(t, 2)
    expect(list.map((m) => [m.text, m.media?.content_type, m.media?.size])).toEqual([
      ['two pictures', 'image/jpeg', JPEG.length],
      ['', 'image/png', PNG.length],
    ])
    expect((await inboundRows(t.tenantId)).map((r) => r.upstreamId)).toEqual(['gw-mms:mms-two', 'gw-mms:mms-two/1'])
    await expectLinksServe([list[0]!, list[1]!], [JPEG, PNG])
  })

  it('refuses a forged signature with 403 and stores neither the message nor the file', async () => {
    const t = await newTenant()
    const p = await connectPhone(t)
    const w = await gateway.event(p.username, {
      event: 'mms:downloaded',
      payload: payload('forged', [{ contentType: 'image/jpeg', bytes: JPEG }], 'mms-forged'),
      sign_with: 'another-key',
    })
    expect((await post(w)).status).toBe(403)
    const good = await gateway.event(p.username, {
      event: 'mms:downloaded',
      payload: payload('forged', [{ contentType: 'image/jpeg', bytes: JPEG }], 'mms-forged'),
    })
    expect((await post(good, { headers: { 'X-Timestamp': null } })).status).toBe(403)
    expect(await inboundRows(t.tenantId)).toHaveLength(0)
    const id = await mediaIdFor(t.tenantId, NUMBER, 'gw-mms:mms-forged')
    expect(await db.select().from(mediaTable).where(eq(mediaTable.id, id)).get()).toBeUndefined()
    expect(await env.MEDIA.head(mediaKey(t.tenantId, NUMBER, id))).toBeNull()
  })

  it('stores a repeated delivery once, and a new envelope for the same MMS once too', async () => {
    const t = await newTenant()
    const p = await connectPhone(t)
    const mms = payload('again', [{ contentType: 'image/jpeg', bytes: JPEG }], 'mms-again')
    const w = await gateway.event(p.username, { event: 'mms:downloaded', payload: mms })
    expect((await post(w)).status).toBe(204)
    expect((await post(w)).status).toBe(204)
    await arrived(t, 1)
    // The phone reporting the same MMS again under a new envelope id.
    expect((await post(await gateway.event(p.username, { event: 'mms:downloaded', payload: mms }))).status).toBe(204)
    expect((await post(w)).status).toBe(204)
    await new Promise((r) => setTimeout(r, 50))
    expect(await inboundRows(t.tenantId)).toHaveLength(1)
    expect(await eventsOf(t.tenantId, 'message.received')).toHaveLength(1)
  })

  it('stores a file the phone sent without content as media.unavailable, and a text-only MMS as text', async () => {
    const t = await newTenant()
    const p = await connectPhone(t)
    await post(await gateway.event(p.username, { event: 'mms:downloaded', payload: payload('no bytes', [{ contentType: 'video/mp4' }], 'mms-empty') }))
    await post(await gateway.event(p.username, { event: 'mms:downloaded', payload: payload('just words', [], 'mms-text') }))
    const list = await arrived(t, 2)
    expect(list[0]).toMatchObject({ text: 'no bytes', media: { unavailable: true, content_type: 'video/mp4', kind: 'video' } })
    expect(list[1]).toMatchObject({ text: 'just words', media: null })
  })

  it('accepts a body up to the phone route’s cap and refuses a larger one with 413, without raising /v1’s', async () => {
    const t = await newTenant()
    const p = await connectPhone(t)
    // About 3 MiB of photo, 4 MiB base64: over /v1's 256 KiB, under the phone route's 8 MiB.
    const big = Buffer.alloc(3 * 1024 * 1024, 7)
    const w = await gateway.event(p.username, { event: 'mms:downloaded', payload: payload('big', [{ contentType: 'image/jpeg', bytes: big }], 'mms-big') })
    expect(w.body.length).toBeGreaterThan(4 * 1024 * 1024)
    expect((await post(w)).status).toBe(204)
    const [m] = await arrived(t, 1)
    expect(m!.media).toMatchObject({ size: big.length, too_large: false })
    const tooBig = await post(w, { body: ' '.repeat(GATEWAY_WEBHOOK_MAX_BYTES + 1) })
    expect(tooBig.status).toBe(413)
    const v1 = await call('/v1/messages', { method: 'POST', key: t.key, headers: { 'Content-Type': 'application/json' }, body: ' '.repeat(300 * 1024) })
    expect(v1.status).toBe(413)
  })
})
