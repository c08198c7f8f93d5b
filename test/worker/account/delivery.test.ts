/**
 * Outbound delivery on the custom channel against a real local HTTP receiver: what is POSTed, how each answer
 * (2xx, 500, redirect, timeout, network error) settles the message and its event, the 202 that comes before
 * delivery, and the alarm sweep that keeps a message from staying queued when an attempt was interrupted.
 */
import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test'
import { env } from 'cloudflare:workers'
import { eq } from 'drizzle-orm'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { messages } from '../../../schema/d1'
import type { MessageEvent } from '../../../schema/events'
import { accountStub } from '../../../worker/lib/objects'
import { DELIVERY_LEASE_MS, MAX_DELIVERY_ATTEMPTS } from '../../../worker/account/delivery'
import { DELIVERY_USER_AGENT } from '../../../worker/channels/custom/outbound'
import { call, connectCustom, getMessageVia, newTenant, pushInbound, receiverChannel, send, settled, type TestTenant } from '../helpers'
import { db, eventsOf, messageRow, setClock } from '../state'

afterEach(() => {
  vi.useRealTimers()
})

async function replyTo(t: TestTenant, fromId: string, json: Record<string, unknown> = {}) {
  const inbound = await pushInbound(t, { body: 'hi', fromId, firstName: 'Kim' })
  const r = await send(t, { to: { external_id: fromId }, text: 'Thanks, noted.', ...json })
  expect(r.status).toBe(202)
  return { messageId: String(r.body.message_id), contactId: String(inbound.body.contact_id) }
}

describe('what the custom channel webhook receives', () => {
  it('is one JSON POST to the exact URL with messageId, contactId, toId, body and isVoiceNote, and no attachment fields', async () => {
    const t = await newTenant()
    const ch = receiverChannel('payload')
    await call('/v1/channels/custom', { method: 'PUT', key: t.key, json: { webhook_url: `${ch.url}?token=s3cret` } })
    const { messageId, contactId } = await replyTo(t, 'crm-9')
    const [req] = await ch.waitFor(1)
    expect(req).toMatchObject({ method: 'POST', path: `/r/${ch.name}?token=s3cret` })
    expect(req!.headers['content-type']).toMatch(/^application\/json/)
    expect(req!.headers['user-agent']).toBe(DELIVERY_USER_AGENT)
    expect(req!.json).toEqual({ messageId, contactId, toId: 'crm-9', body: 'Thanks, noted.', isVoiceNote: false })
  })

  it('adds mediaUrl, mediaContentType and mediaFileName when the message has an attachment', async () => {
    const t = await newTenant()
    const ch = await connectCustom(t)
    await replyTo(t, 'm-1', { media_url: 'https://cdn.example.com/files/menu%20today.pdf' })
    const [req] = await ch.waitFor(1)
    expect(req!.json).toMatchObject({
      mediaUrl: 'https://cdn.example.com/files/menu%20today.pdf',
      mediaContentType: 'application/pdf',
      mediaFileName: 'menu today.pdf',
      isVoiceNote: false,
    })
  })

  it('sends all three attachment fields even when the URL tells neither the type nor a file name', async () => {
    const t = await newTenant()
    const ch = await connectCustom(t)
    await replyTo(t, 'm-2', { media_url: 'https://cdn.example.com/media/12345' })
    await replyTo(t, 'm-3', { media_url: 'https://cdn.example.com/' })
    const reqs = await ch.waitFor(2)
    const byUrl = new Map(reqs.map((r) => [(r.json as { mediaUrl: string }).mediaUrl, r.json]))
    expect(byUrl.get('https://cdn.example.com/media/12345')).toMatchObject({ mediaContentType: 'application/octet-stream', mediaFileName: '12345' })
    expect(byUrl.get('https://cdn.example.com/')).toMatchObject({ mediaContentType: 'application/octet-stream', mediaFileName: 'attachment' })
  })

  it('marks an Ogg/Opus attachment as a voice note (isVoiceNote true) and other audio not', async () => {
    const t = await newTenant()
    const ch = await connectCustom(t)
    await replyTo(t, 'voice-1', { media_url: 'https://cdn.example.com/notes/hello.ogg' })
    await replyTo(t, 'song-1', { media_url: 'https://cdn.example.com/music/song.mp3' })
    const reqs = await ch.waitFor(2)
    const byName = new Map(reqs.map((r) => [(r.json as { mediaFileName: string }).mediaFileName, r.json]))
    expect(byName.get('hello.ogg')).toMatchObject({ mediaContentType: 'audio/ogg', isVoiceNote: true })
    expect(byName.get('song.mp3')).toMatchObject({ mediaContentType: 'audio/mpeg', isVoiceNote: false })
  })

  it('sends the same messageId that GET /messages/{id} takes', async () => {
    const t = await newTenant()
    const ch = await connectCustom(t)
    const { messageId } = await replyTo(t, 'id-check')
    const [req] = await ch.waitFor(1)
    const sentId = (req!.json as { messageId: string }).messageId
    expect((await getMessageVia(t, sentId)).body.id).toBe(messageId)
  })
})

describe('how the answer settles the message', () => {
  it('marks the message sent on a 2xx and emits message.sent', async () => {
    for (const status of [200, 201, 204]) {
      const t = await newTenant()
      const ch = await connectCustom(t)
      await ch.behave({ status, body: status === 204 ? '' : '{"ok":true}' })
      const { messageId, contactId } = await replyTo(t, `ok-${status}`)
      const m = await settled(t, messageId)
      expect(m, `HTTP ${status}`).toMatchObject({ status: 'sent', error: null })
      const events = await eventsOf(t.tenantId, 'message.sent')
      expect(events.map((e) => e.payload)).toEqual([
        {
          event: 'message.sent',
          created_at: expect.any(String),
          account_id: 'custom',
          channel: 'custom',
          message: { id: messageId, direction: 'outbound', text: 'Thanks, noted.', media: null, status: 'sent', error: null },
          contact: { id: contactId, phone: null, name: 'Kim' },
        } satisfies MessageEvent,
      ])
    }
  })

  it('marks the message failed with a readable error on a 500 and emits message.failed', async () => {
    const t = await newTenant()
    const ch = await connectCustom(t)
    await ch.behave({ status: 500 })
    const { messageId } = await replyTo(t, 'err')
    const m = await settled(t, messageId)
    expect(m.status).toBe('failed')
    expect(m.error).toEqual({ code: 500, message: 'the custom channel webhook answered HTTP 500' })
    const [event] = await eventsOf(t.tenantId, 'message.failed')
    expect(event?.payload).toMatchObject({
      event: 'message.failed',
      message: { id: messageId, status: 'failed', error: 'the custom channel webhook answered HTTP 500' },
    })
    expect(await eventsOf(t.tenantId, 'message.sent')).toHaveLength(0)
  })

  it('fails on a 4xx too', async () => {
    const t = await newTenant()
    const ch = await connectCustom(t)
    await ch.behave({ status: 404 })
    const { messageId } = await replyTo(t, 'gone')
    expect((await settled(t, messageId)).error).toEqual({ code: 404, message: 'the custom channel webhook answered HTTP 404' })
  })

  it('does not follow a redirect, and fails the message', async () => {
    const t = await newTenant()
    const ch = await connectCustom(t)
    const elsewhere = receiverChannel('redirect-target')
    await ch.behave({ status: 302, headers: { location: elsewhere.url } })
    const { messageId } = await replyTo(t, 'moved')
    const m = await settled(t, messageId)
    expect(m.status).toBe('failed')
    expect(m.error?.message).toMatch(/redirect \(HTTP 302\)/)
    expect(await elsewhere.log()).toHaveLength(0)
  })

  it('fails the message when the webhook does not answer within DELIVERY_TIMEOUT_MS', async () => {
    const t = await newTenant()
    const ch = await connectCustom(t)
    await ch.behave({ delay_ms: 1500 })
    const { messageId } = await replyTo(t, 'slow')
    const m = await settled(t, messageId)
    expect(m.status).toBe('failed')
    expect(m.error).toEqual({ code: null, message: 'the custom channel webhook did not answer within 0.4 s' })
    expect((await eventsOf(t.tenantId, 'message.failed')).map((e) => (e.payload as MessageEvent).message.error)).toEqual([m.error?.message])
  })

  it('fails the message on a network error', async () => {
    const t = await newTenant()
    // Port 9 (discard) on loopback: nothing listens, the connection is refused.
    await call('/v1/channels/custom', { method: 'PUT', key: t.key, json: { webhook_url: 'http://127.0.0.1:9/hook' } })
    const { messageId } = await replyTo(t, 'unreachable')
    const m = await settled(t, messageId)
    expect(m.status).toBe('failed')
    expect(m.error?.message).toMatch(/^the custom channel webhook could not be reached/)
    expect(await eventsOf(t.tenantId, 'message.failed')).toHaveLength(1)
  })

  it('answers 202 queued before the webhook has answered', async () => {
    const t = await newTenant()
    const ch = await connectCustom(t)
    await ch.behave({ delay_ms: 300 })
    const { messageId } = await replyTo(t, 'patient')
    expect((await getMessageVia(t, messageId)).body.status).toBe('queued')
    expect((await settled(t, messageId)).status).toBe('sent')
  })

  it('stops replies once the channel is removed: a message still in flight is failed, and stays failed', async () => {
    const t = await newTenant()
    const ch = await connectCustom(t)
    await ch.behave({ delay_ms: 250 })
    const { messageId } = await replyTo(t, 'late')
    await ch.waitFor(1)
    expect((await call('/v1/channels/custom', { method: 'DELETE', key: t.key })).status).toBe(200)
    const m = await getMessageVia(t, messageId)
    expect(m.body).toMatchObject({ status: 'failed', error: { message: 'the account was disconnected before the message was delivered' } })
    // Let the in-flight attempt finish: it must not turn the message into `sent`.
    await new Promise((r) => setTimeout(r, 400))
    expect((await getMessageVia(t, messageId)).body.status).toBe('failed')
    expect(await eventsOf(t.tenantId, 'message.sent')).toHaveLength(0)
    expect(await eventsOf(t.tenantId, 'message.failed')).toHaveLength(1)
    expect((await send(t, { to: { external_id: 'late' }, text: 'still there?' })).body.error_code).toBe('no_connected_account')
  })
})

describe('the delivery sweep (alarm)', () => {
  const T0 = Date.parse('2030-02-01T12:00:00.000Z')

  /** A sent message put back into the state an evicted attempt leaves: queued, with `attempts` attempts begun at T0. */
  async function interrupted(attempts: number) {
    setClock(T0)
    const t = await newTenant()
    const ch = await connectCustom(t)
    const { messageId } = await replyTo(t, `evicted-${attempts}`)
    await ch.waitFor(1)
    expect((await settled(t, messageId)).status).toBe('sent')
    await db.update(messages).set({ status: 'queued', attempts, lastAttemptAt: T0 }).where(eq(messages.id, messageId))
    return { t, ch, messageId, stub: accountStub(env, t.tenantId, 'custom') }
  }

  it('retries a queued message whose attempt was interrupted, once its lease has run out', async () => {
    const { t, ch, messageId, stub } = await interrupted(1)
    vi.setSystemTime(T0 + DELIVERY_LEASE_MS - 1)
    await runDurableObjectAlarm(stub)
    expect((await messageRow(messageId))?.status).toBe('queued')

    vi.setSystemTime(T0 + DELIVERY_LEASE_MS)
    // The lease check in the alarm ran at T0 + lease - 1 and re-armed itself; run the re-armed alarm.
    await runDurableObjectAlarm(stub)
    const row = await messageRow(messageId)
    expect(row).toMatchObject({ status: 'sent', attempts: 2 })
    expect(await ch.waitFor(2)).toHaveLength(2)
    expect(await eventsOf(t.tenantId, 'message.sent')).toHaveLength(2)
  })

  it(`gives up after ${MAX_DELIVERY_ATTEMPTS} interrupted attempts: failed, with message.failed`, async () => {
    const { t, ch, messageId, stub } = await interrupted(MAX_DELIVERY_ATTEMPTS)
    vi.setSystemTime(T0 + DELIVERY_LEASE_MS)
    expect(await runDurableObjectAlarm(stub)).toBe(true)
    expect(await messageRow(messageId)).toMatchObject({ status: 'failed', errorMessage: 'delivery was interrupted repeatedly and was given up' })
    expect(await ch.log()).toHaveLength(1)
    const failed = await eventsOf(t.tenantId, 'message.failed')
    expect(failed.map((e) => (e.payload as MessageEvent).message.error)).toEqual(['delivery was interrupted repeatedly and was given up'])
  })

  it('delivers a queued message whose first attempt never started', async () => {
    const { ch, messageId, stub } = await interrupted(0)
    await db.update(messages).set({ lastAttemptAt: null }).where(eq(messages.id, messageId))
    vi.setSystemTime(T0 + DELIVERY_LEASE_MS)
    await runDurableObjectAlarm(stub)
    expect((await messageRow(messageId))?.status).toBe('sent')
    expect(await ch.waitFor(2)).toHaveLength(2)
  })

  it('disarms itself when nothing is queued any more', async () => {
    const { stub } = await interrupted(1)
    vi.setSystemTime(T0 + DELIVERY_LEASE_MS)
    expect(await runDurableObjectAlarm(stub)).toBe(true)
    // The alarm may stay armed for the webhook fan-out of message.sent; the delivery timer itself must be gone.
    const timers = await runInDurableObject(stub, (_, state) =>
      state.storage.sql
        .exec<{ name: string }>('SELECT name FROM timers')
        .toArray()
        .map((t) => t.name)
    )
    expect(timers).not.toContain('delivery')
  })
})
