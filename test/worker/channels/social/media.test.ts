/**
 * Page-inbox attachments into the media store: Graph's CDN links expire, so each image, video, audio or file a person
 * sends is fetched (from the fake Graph CDN) after the webhook's answer and the message carries a signed `media.url`
 * to the same bytes. Several attachments, shares that are not files, a re-delivered webhook, a CDN that refuses.
 */
import { describe, expect, inject, it } from 'vitest'
import { fakeGraphCdn } from '../../../fixtures/fake-graph-types'
import { body, call, type TestTenant } from '../../helpers'
import { eventsOf } from '../../state'
import { connectPage, deliverWebhook, PAGE_A, postWebhook } from './social-helpers'

const PSID = '24000000000000077'
const PHOTO = Buffer.from('\xff\xd8\xff\xe0 page inbox photo \xff\xd9', 'latin1')
const cdn = (media: Parameters<typeof fakeGraphCdn.put>[1]) => fakeGraphCdn.put(inject('fakeGraphUrl'), media)

type Listed = {
  text: string
  media: {
    url: string
    content_type: string | null
    kind: string
    size: number | null
    file_name: string | null
    unavailable: boolean
    reason: string | null
  } | null
}

async function arrived(t: TestTenant, n: number): Promise<Listed[]> {
  const list = async () => (await body<{ messages: Listed[] }>(await call('/v1/messages?direction=inbound', { key: t.key }))).messages.reverse()
  for (let i = 0; i < 500; i++) {
    const got = await list()
    if (got.length >= n) return got
    await new Promise((r) => setTimeout(r, 10))
  }
  return list()
}

async function bytesOf(url: string): Promise<Response> {
  const u = new URL(url)
  return call(`${u.pathname}${u.search}`)
}

describe('page-inbox attachments', () => {
  it('stores an image from the CDN: the signed link serves the same bytes and type, and the webhook says queued', async () => {
    const ctx = await connectPage()
    const url = await cdn({ content_type: 'image/jpeg', data_base64: PHOTO.toString('base64') })
    const r = await deliverWebhook(ctx, { kind: 'message', surface: 'page', owner_id: PAGE_A.id, sender_id: PSID, mid: 'm_img_1', attachment_url: url })
    expect(r).toMatchObject({ status: 200, body: { stored: 0, queued: 1 } })
    const [m] = await arrived(ctx.t, 1)
    expect(m).toMatchObject({ text: '', media: { content_type: 'image/jpeg', kind: 'image', size: PHOTO.length, unavailable: false } })
    const res = await bytesOf(m!.media!.url)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('image/jpeg')
    expect(Buffer.from(await res.arrayBuffer()).equals(PHOTO)).toBe(true)
    expect(await fakeGraphCdn.fetches(inject('fakeGraphUrl'), url)).toBe(1)
  })

  it('makes one message per file (text on the first), skips shares that are not files, and keeps file names', async () => {
    const ctx = await connectPage()
    const audio = Buffer.from('fake mp4 audio')
    const pdf = Buffer.from('%PDF-1.7 menu')
    const [a, f] = [
      await cdn({ content_type: 'audio/mp4', data_base64: audio.toString('base64'), extension: 'mp4' }),
      await cdn({ content_type: 'application/pdf', data_base64: pdf.toString('base64'), extension: 'pdf' }),
    ]
    await deliverWebhook(ctx, {
      kind: 'message',
      surface: 'page',
      owner_id: PAGE_A.id,
      sender_id: PSID,
      text: 'menu and a voice clip',
      mid: 'm_multi_1',
      attachments: [
        { type: 'audio', payload: { url: a } },
        { type: 'fallback', payload: { url: 'https://example.com/shared-link' } },
        { type: 'file', payload: { url: f } },
      ],
    })
    const list = await arrived(ctx.t, 2)
    expect(list.map((m) => [m.text, m.media?.kind, m.media?.content_type])).toEqual([
      ['menu and a voice clip', 'audio', 'audio/mp4'],
      ['', 'document', 'application/pdf'],
    ])
    expect(list[1]!.media!.file_name).toMatch(/_n\.pdf$/)
    expect(Buffer.from(await (await bytesOf(list[1]!.media!.url)).arrayBuffer()).equals(pdf)).toBe(true)
  })

  it('stores a re-delivered webhook once and fetches its image once', async () => {
    const ctx = await connectPage()
    const url = await cdn({ content_type: 'image/png', data_base64: PHOTO.toString('base64') })
    const hook = await ctx.graph.webhook({ kind: 'message', surface: 'page', owner_id: PAGE_A.id, sender_id: PSID, mid: 'm_dup_1', attachment_url: url })
    expect((await postWebhook(ctx.webhookPath, hook.body, hook.signature)).status).toBe(200)
    await postWebhook(ctx.webhookPath, hook.body, hook.signature)
    await arrived(ctx.t, 1)
    const again = await postWebhook(ctx.webhookPath, hook.body, hook.signature)
    expect(again).toMatchObject({ status: 200 })
    await new Promise((r) => setTimeout(r, 100))
    expect(await arrived(ctx.t, 1)).toHaveLength(1)
    expect(await eventsOf(ctx.t.tenantId, 'message.received')).toHaveLength(1)
    expect(await fakeGraphCdn.fetches(inject('fakeGraphUrl'), url)).toBe(1)
  })

  it('keeps the message with media.unavailable when the CDN link has expired (403)', async () => {
    const ctx = await connectPage()
    const url = await cdn({ content_type: 'image/jpeg', data_base64: PHOTO.toString('base64'), fail: [403] })
    await deliverWebhook(ctx, {
      kind: 'message',
      surface: 'page',
      owner_id: PAGE_A.id,
      sender_id: PSID,
      text: 'old photo',
      mid: 'm_exp_1',
      attachment_url: url,
    })
    const [m] = await arrived(ctx.t, 1)
    expect(m).toMatchObject({ text: 'old photo', media: { kind: 'image', content_type: 'image/*', unavailable: true, size: null } })
    expect(m!.media!.reason).toContain('HTTP 403')
    expect((await bytesOf(m!.media!.url)).status).toBe(404)
  })
})
