/**
 * MMS into the media store: Twilio's answer comes at once, each attachment is fetched afterwards from the fake
 * Twilio (Basic auth, then a redirect to its storage) into R2, and the message arrives with a `media.url` whose bytes
 * and type are the sender's. Several attachments, over the cap, a failing provider (retried on an injected clock,
 * then marked unavailable), a re-delivered webhook (fetched and stored once), order behind a pending MMS, and the
 * Basic auth staying on Twilio's host.
 */
import { runDurableObjectAlarm } from 'cloudflare:test'
import { env } from 'cloudflare:workers'
import { and, eq } from 'drizzle-orm'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { contacts, media as mediaTable } from '../../../../schema/d1'
import { MEDIA_RETRY_DELAYS_MS } from '../../../../worker/account/inbound-queue'
import { accountStub } from '../../../../worker/lib/objects'
import { body, call, newTenant, type TestTenant } from '../../helpers'
import { db, eventsOf, setClock } from '../../state'
import {
  arrivedMessages,
  connectTwilio,
  expectLinksServe,
  expectSignedLinkServes,
  inboundMessages,
  inboundRows,
  post,
  twilio,
  type FakeMmsMedia,
} from './sms-helpers'

const FROM = '+447700900555'
const JPEG = Buffer.from('\xff\xd8\xff\xe0 a small jpeg for the test \xff\xd9', 'latin1')
const PNG = Buffer.from('\x89PNG\r\n\x1a\n a small png', 'latin1')

afterEach(() => {
  vi.useRealTimers()
})

type WireMedia = {
  url: string
  content_type: string | null
  id: string
  kind: string
  size: number | null
  too_large: boolean
  unavailable: boolean
  reason: string | null
}
type Listed = { id: string; text: string; media: WireMedia | null }

const inbound = (t: TestTenant) => inboundMessages<Listed>(t)
/** Waits until the account stored `n` inbound messages: the fetch runs after the answer. */
const arrived = (t: TestTenant, n: number) => arrivedMessages<Listed>(t, n)

async function mms(c: Awaited<ReturnType<typeof connectTwilio>>, text: string, media: FakeMmsMedia[], messageSid?: string) {
  const p = await twilio.inbound(c.account_sid, { to: c.number, from: FROM, body: text, media, ...(messageSid ? { message_sid: messageSid } : {}) })
  const res = await post(p)
  return { p, res }
}

describe('inbound MMS from Twilio', () => {
  it('stores a photo in the media store: the link serves the same bytes and type, fetched with Twilio’s Basic auth', async () => {
    const t = await newTenant()
    const c = await connectTwilio(t)
    const { res } = await mms(c, 'look at this', [{ content_type: 'image/jpeg', data_base64: JPEG.toString('base64') }])
    expect(res.status).toBe(200)
    expect(await res.text()).toContain('<Response></Response>')
    const [m] = await arrived(t, 1)
    expect(m).toMatchObject({
      text: 'look at this',
      media: { content_type: 'image/jpeg', kind: 'image', size: JPEG.length, too_large: false, unavailable: false },
    })
    await expectSignedLinkServes(m!.media!.url, 'image/jpeg', JPEG)
    const viaKey = await call(`/v1/media/${m!.media!.id}`, { key: t.key })
    expect(Buffer.from(await viaKey.arrayBuffer()).equals(JPEG)).toBe(true)
    const events = await eventsOf(t.tenantId, 'message.received')
    expect(events).toHaveLength(1)
    // The fake answers 401 without the account's Basic auth: one fetch, and it carried it.
    expect((await twilio.media(c.account_sid)).media.map((x) => x.fetches)).toEqual([1])
  })

  it('turns an MMS with several attachments into one message per attachment, the text on the first, in order', async () => {
    const t = await newTenant()
    const c = await connectTwilio(t)
    const pdf = Buffer.from('%PDF-1.4 tiny')
    await mms(c, 'three files', [
      { content_type: 'image/jpeg', data_base64: JPEG.toString('base64') },
      { content_type: 'image/png', data_base64: PNG.toString('base64') },
      { content_type: 'application/pdf', data_base64: pdf.toString('base64') },
    ])
    const list = await arrived(t, 3)
    expect(list.map((m) => [m.text, m.media?.content_type, m.media?.kind, m.media?.size])).toEqual([
      ['three files', 'image/jpeg', 'image', JPEG.length],
      ['', 'image/png', 'image', PNG.length],
      ['', 'application/pdf', 'document', pdf.length],
    ])
    const rows = await inboundRows(t.tenantId)
    const sid = rows[0]!.upstreamId!
    expect(rows.map((r) => r.upstreamId)).toEqual([sid, `${sid}/1`, `${sid}/2`])
    await expectLinksServe([list[1]!, list[2]!], [PNG, pdf])
  })

  it('keeps an item over the 64 MiB cap as a message with media.too_large and the reason, without reading it', async () => {
    const t = await newTenant()
    const c = await connectTwilio(t)
    const size = 64 * 1024 * 1024 + 1
    await mms(c, 'huge video', [{ content_type: 'video/mp4', size }])
    const [m] = await arrived(t, 1)
    expect(m).toMatchObject({ text: 'huge video', media: { content_type: 'video/mp4', kind: 'video', size, too_large: true, unavailable: false } })
    expect(m!.media!.reason).toContain('over the 67108864-byte cap')
    expect((await call(`/v1/media/${m!.media!.id}`, { key: t.key })).status).toBe(413)
    expect(await env.MEDIA.head(`media/${encodeURIComponent(t.tenantId)}/${encodeURIComponent(c.number)}/${m!.media!.id}`)).toBeNull()
  })

  it('retries a failing provider on the media timer and stores the message with its media once the provider answers', async () => {
    const T0 = Date.parse('2030-05-01T08:00:00.000Z')
    setClock(T0)
    const t = await newTenant()
    const c = await connectTwilio(t)
    const { res } = await mms(c, 'retry me', [{ content_type: 'image/jpeg', data_base64: JPEG.toString('base64'), fail: [503] }])
    expect(res.status).toBe(200)
    const stub = accountStub(env, t.tenantId, c.number)
    // The first fetch failed with 503: nothing is stored yet, the message waits for its retry.
    await runDurableObjectAlarm(stub)
    expect(await inbound(t)).toEqual([])
    vi.setSystemTime(T0 + MEDIA_RETRY_DELAYS_MS[0])
    await runDurableObjectAlarm(stub)
    const [m] = await arrived(t, 1)
    expect(m).toMatchObject({ text: 'retry me', media: { content_type: 'image/jpeg', unavailable: false, size: JPEG.length } })
    expect((await twilio.media(c.account_sid)).media.map((x) => x.fetches)).toEqual([2])
  })

  it('stores the message with media.unavailable and the reason when the provider keeps failing, and at once for a 404', async () => {
    const T0 = Date.parse('2030-05-02T08:00:00.000Z')
    setClock(T0)
    const t = await newTenant()
    const c = await connectTwilio(t)
    await mms(c, 'never comes', [{ content_type: 'image/jpeg', data_base64: JPEG.toString('base64'), fail: [500, 500, 500, 500, 500] }])
    const stub = accountStub(env, t.tenantId, c.number)
    await runDurableObjectAlarm(stub)
    let at = T0
    for (const delay of MEDIA_RETRY_DELAYS_MS) {
      expect(await inbound(t)).toEqual([])
      at += delay
      vi.setSystemTime(at)
      await runDurableObjectAlarm(stub)
    }
    const [m] = await arrived(t, 1)
    expect(m).toMatchObject({ text: 'never comes', media: { content_type: 'image/jpeg', too_large: false, unavailable: true, size: null } })
    expect(m!.media!.reason).toContain('HTTP 500')
    const viaKey = await call(`/v1/media/${m!.media!.id}`, { key: t.key })
    expect(viaKey.status).toBe(404)
    expect(await body(viaKey)).toMatchObject({ error_code: 404, error: expect.stringContaining('HTTP 500') })
    expect((await twilio.media(c.account_sid)).media.map((x) => x.fetches)).toEqual([MEDIA_RETRY_DELAYS_MS.length + 1])

    // A permanent refusal (404: the media was deleted at Twilio) is not retried.
    await mms(c, 'gone', [{ content_type: 'image/png', data_base64: PNG.toString('base64'), fail: [404] }])
    const list = await arrived(t, 2)
    expect(list[1]).toMatchObject({ text: 'gone', media: { unavailable: true, reason: expect.stringContaining('HTTP 404') } })
  })

  it('stores and fetches a re-delivered MMS once', async () => {
    const t = await newTenant()
    const c = await connectTwilio(t)
    const { p } = await mms(c, 'twice', [{ content_type: 'image/jpeg', data_base64: JPEG.toString('base64') }])
    expect((await post(p)).status).toBe(200)
    await arrived(t, 1)
    // And once more after it was stored.
    expect((await post(p)).status).toBe(200)
    const stub = accountStub(env, t.tenantId, c.number)
    await runDurableObjectAlarm(stub)
    await new Promise((r) => setTimeout(r, 50))
    expect(await inbound(t)).toHaveLength(1)
    expect(await eventsOf(t.tenantId, 'message.received')).toHaveLength(1)
    expect((await twilio.media(c.account_sid)).media.map((x) => x.fetches)).toEqual([1])
    expect(await db.select().from(mediaTable).where(eq(mediaTable.tenantId, t.tenantId))).toHaveLength(1)
  })

  it('keeps arrival order: a text sent right after a pending MMS is stored after it', async () => {
    const T0 = Date.parse('2030-05-03T08:00:00.000Z')
    setClock(T0)
    const t = await newTenant()
    const c = await connectTwilio(t)
    await mms(c, 'photo first', [{ content_type: 'image/jpeg', data_base64: JPEG.toString('base64'), fail: [503] }])
    const stub = accountStub(env, t.tenantId, c.number)
    await runDurableObjectAlarm(stub)
    expect((await post(await twilio.inbound(c.account_sid, { to: c.number, from: FROM, body: 'then text' }))).status).toBe(200)
    expect(await inbound(t)).toEqual([])
    vi.setSystemTime(T0 + MEDIA_RETRY_DELAYS_MS[0])
    await runDurableObjectAlarm(stub)
    const list = await arrived(t, 2)
    expect(list.map((m) => [m.text, m.media?.kind ?? null])).toEqual([
      ['photo first', 'image'],
      ['then text', null],
    ])
  })

  it('applies a provider opt-out (OptOutType STOP) carried by an MMS once the message is stored', async () => {
    const t = await newTenant()
    const c = await connectTwilio(t)
    const p = await twilio.inbound(c.account_sid, {
      to: c.number,
      from: FROM,
      body: 'unsubscribe',
      media: [{ content_type: 'image/jpeg', data_base64: JPEG.toString('base64') }],
      opt_out_type: 'STOP',
    })
    expect((await post(p)).status).toBe(200)
    await arrived(t, 1)
    const contact = await db
      .select()
      .from(contacts)
      .where(and(eq(contacts.tenantId, t.tenantId), eq(contacts.phone, FROM)))
      .get()
    expect(contact?.optedOut).toBe(true)
  })
})
