/**
 * Owner approval end to end on the custom channel: the held send, the signed webhook event, the hosted page (a GET
 * decides nothing), approval that runs every limit at that moment, rejection, expiry, and who may decide.
 */
import { env } from 'cloudflare:workers'
import { eq } from 'drizzle-orm'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { contacts } from '../../../schema/d1'
import { APPROVAL_TTL_MS } from '../../../worker/safety/grant'
import { sweepSafety } from '../../../worker/messaging/safety-sweep'
import { ORIGIN, body, call, connectCustom, newTenant, pushInbound, receiverChannel, settled, type WireMessageBody } from '../helpers'
import { db, setClock } from '../state'
import { createWebhook } from '../webhook-helpers'
import { adminKey } from '../safety/helpers'

type Approval = { page_url: string; approve_url: string; reject_url: string; expires_at: string; key_id: string; key_label: string | null }
type HeldEvent = {
  event: string
  account_id: string
  channel: string
  message: { id: string; text: string; status: string; error: string | null }
  contact: { id: string }
  approval: Approval
}

afterEach(() => {
  vi.useRealTimers()
})

async function setup() {
  const t = await newTenant()
  const bridge = await connectCustom(t, 'bridge')
  const hooks = receiverChannel('approvals')
  const secret = await createWebhook(t, { url: hooks.url, subscribed_to: ['message.approval_required', 'message.failed'], generate_signing_secret: true })
  await hooks.behave({ secret: secret.signing_secret! })
  const agent = await adminKey(t.tenantId, { approval: true, label: 'outreach agent' })
  return { t, bridge, hooks, agent }
}

const sendAs = (key: string, externalId: string, text: string) => call('/v1/messages', { method: 'POST', key, json: { to: { external_id: externalId }, text } })
const decideAs = (key: string, id: string, decision: 'approve' | 'reject') => call(`/v1/messages/${id}/${decision}`, { method: 'POST', key })
type AuditEntry = { action: string; key_id: string | null; key_label: string | null; contact_id: string | null; message_id: string | null; outcome: string }
const auditEntries = async (t: { key: string }, action: string) =>
  (await body<{ entries: AuditEntry[] }>(await call('/v1/audit?limit=100', { key: t.key }))).entries.filter((e) => e.action === action)
const local = (url: string) => url.replace(/^https?:\/\/[^/]+/, ORIGIN)

async function postPage(token: string, decision: string) {
  return call('/approvals', {
    method: 'POST',
    body: new URLSearchParams({ token, decision }),
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
  })
}

describe('a key with approval', () => {
  it('holds a send to someone who never wrote, tells the owner by a signed webhook, and sends once approved on the page', async () => {
    const { t, bridge, hooks, agent } = await setup()
    const res = await sendAs(agent.key, 'stranger', 'Hello from the shop')
    expect(res.status).toBe(202)
    const { message_id: id } = await body<{ message_id: string; status: string }>(res)
    expect(await body(await call(`/v1/messages/${id}`, { key: t.key }))).toMatchObject({ status: 'awaiting_approval', error: null })

    const [delivery] = await hooks.waitFor(1)
    expect(delivery?.verified).toBe(true)
    expect(delivery?.headers['x-webhook-event']).toBe('message.approval_required')
    const event = delivery!.json as HeldEvent
    expect(event).toMatchObject({
      event: 'message.approval_required',
      account_id: 'custom',
      channel: 'custom',
      message: { id, text: 'Hello from the shop', status: 'awaiting_approval' },
    })
    expect(event.approval).toMatchObject({ key_id: agent.id, key_label: 'outreach agent', page_url: expect.stringContaining('/approvals?token=') })
    expect(Date.parse(event.approval.expires_at) - Date.now()).toBeGreaterThan(APPROVAL_TTL_MS - 60_000)

    // Opening a link (as a mail scanner would) decides nothing.
    const page = await call(local(event.approval.approve_url).replace(ORIGIN, ''))
    expect(page.status).toBe(200)
    const html = await page.text()
    expect(html).toContain('Hello from the shop')
    expect(html).toContain('Approve and send')
    expect((await body<WireMessageBody>(await call(`/v1/messages/${id}`, { key: t.key }))).status).toBe('awaiting_approval')
    expect((await bridge.log()).length).toBe(0)

    const token = new URL(event.approval.page_url).searchParams.get('token')!
    const approved = await postPage(token, 'approve')
    expect(approved.status).toBe(200)
    expect(await approved.text()).toContain('Approved')
    const held = await settled(t, id)
    expect(held.status).toBe('sent')
    const [out] = await bridge.waitFor(1)
    expect(out?.json).toMatchObject({ messageId: id, body: 'Hello from the shop', toId: 'stranger' })
    // Recorded under the key that held it, with that key's label and the person, like any entry.
    const entries = await auditEntries(t, 'approval page')
    expect(entries).toEqual([
      expect.objectContaining({ key_id: agent.id, key_label: 'outreach agent', contact_id: held.contact.id, message_id: id, outcome: 'approved' }),
    ])
    // The link is spent.
    expect((await postPage(token, 'reject')).status).toBe(409)
    expect((await call(`/approvals?token=${encodeURIComponent(token)}`)).status).toBe(409)
  })

  it('sends replies to people who wrote without holding them', async () => {
    const { t, agent } = await setup()
    await pushInbound(t, { body: 'hi', fromId: 'friend' })
    const res = await sendAs(agent.key, 'friend', 'Hello again')
    expect(await body(res)).toEqual({ message_id: expect.any(String), status: 'queued' })
  })

  it('rejects through REST with a full key: the message fails with a reason and message.failed', async () => {
    const { t, bridge, hooks, agent } = await setup()
    const { message_id: id } = await body<{ message_id: string }>(await sendAs(agent.key, 'stranger', 'Buy now'))
    const rejected = await decideAs(t.key, id, 'reject')
    expect(rejected.status).toBe(200)
    expect(await body(rejected)).toMatchObject({ id, status: 'failed', error: { code: null, message: expect.stringContaining('approval_rejected') } })
    const events = (await hooks.waitFor(2)).map((d) => d.json as HeldEvent)
    expect(events.map((e) => e.event)).toEqual(['message.approval_required', 'message.failed'])
    expect(events[1]?.message.error).toContain('approval_rejected')
    expect((await decideAs(t.key, id, 'approve')).status).toBe(409)
    expect((await bridge.log()).length).toBe(0)
  })

  it('lets no key with approval, no read or reply key, and no other tenant decide', async () => {
    const { t, agent } = await setup()
    const { message_id: id } = await body<{ message_id: string }>(await sendAs(agent.key, 'stranger', 'Hi'))
    const reader = await adminKey(t.tenantId, { scope: 'read' })
    for (const key of [agent.key, reader.key]) {
      const res = await decideAs(key, id, 'approve')
      expect(res.status).toBe(403)
      expect(await body(res)).toMatchObject({ error_code: 'key_scope' })
    }
    const other = await newTenant()
    expect((await decideAs(other.key, id, 'approve')).status).toBe(404)
    expect((await body<WireMessageBody>(await call(`/v1/messages/${id}`, { key: t.key }))).status).toBe('awaiting_approval')
  })

  it('runs every limit at approval time: the approval past the new-contact cap fails the message with new_contact_cap', async () => {
    const { t, agent, hooks } = await setup()
    const ids: string[] = []
    // Distinct texts: the same opener to more than 5 strangers would trip opener_burst instead.
    for (let i = 0; i < 11; i++)
      ids.push((await body<{ message_id: string }>(await sendAs(agent.key, `stranger-${i}`, `Hello number ${i}, a note from us`))).message_id)
    for (const id of ids.slice(0, 10)) expect((await decideAs(t.key, id, 'approve')).status).toBe(200)
    const held = await body<WireMessageBody>(await call(`/v1/messages/${ids[10]}`, { key: t.key }))
    await db.update(contacts).set({ firstName: 'Ada', lastName: 'Lovelace' }).where(eq(contacts.id, held.contact.id))
    const refused = await decideAs(t.key, ids[10]!, 'approve')
    expect(refused.status).toBe(429)
    expect(await body(refused)).toMatchObject({ error_code: 'new_contact_cap', retry_after_s: expect.any(Number) })
    const failed = await body<WireMessageBody>(await call(`/v1/messages/${ids[10]}`, { key: t.key }))
    expect(failed).toMatchObject({ status: 'failed', error: { message: expect.stringContaining('new_contact_cap') } })
    // Its message.failed names the person as every other message event does (the name was learnt meanwhile).
    const events = (await hooks.waitFor(12)).map((d) => d.json as HeldEvent)
    expect(events.filter((e) => e.event === 'message.failed')).toEqual([
      expect.objectContaining({
        message: expect.objectContaining({ id: ids[10], status: 'failed' }),
        contact: { id: failed.contact.id, phone: null, name: 'Ada Lovelace' },
      }),
    ])
    // Holding counted nothing: the usage shows the ten approved sends only.
    expect(await body(await call('/v1/usage', { key: t.key }))).toMatchObject({ sends: 10, new_contacts: 10 })
  })

  it('fails a message nobody decided with approval_expired, and its link answers 410', async () => {
    const { t, hooks, agent } = await setup()
    const { message_id: id } = await body<{ message_id: string }>(await sendAs(agent.key, 'stranger', 'Hi there'))
    const event = (await hooks.waitFor(1))[0]!.json as HeldEvent
    const token = new URL(event.approval.page_url).searchParams.get('token')!
    const report = await sweepSafety(env, db, Date.now() + APPROVAL_TTL_MS + 1000)
    expect(report.expiredApprovals).toBeGreaterThanOrEqual(1)
    expect(await body(await call(`/v1/messages/${id}`, { key: t.key }))).toMatchObject({
      status: 'failed',
      error: { message: expect.stringContaining('approval_expired') },
    })
    expect((await hooks.waitFor(2)).map((d) => (d.json as HeldEvent).event)).toEqual(['message.approval_required', 'message.failed'])
    const contactId = (await body<WireMessageBody>(await call(`/v1/messages/${id}`, { key: t.key }))).contact.id
    expect(await auditEntries(t, 'approval expiry')).toEqual([
      expect.objectContaining({ key_id: agent.id, key_label: 'outreach agent', contact_id: contactId, message_id: id, outcome: 'rejected' }),
    ])
    setClock(Date.now() + APPROVAL_TTL_MS + 1000)
    expect((await call(`/approvals?token=${encodeURIComponent(token)}`)).status).toBe(410)
    expect((await postPage(token, 'approve')).status).toBe(410)
  })

  it('answers 403 for a forged or altered link', async () => {
    const { hooks, agent } = await setup()
    await sendAs(agent.key, 'stranger', 'Hi')
    const event = (await hooks.waitFor(1))[0]!.json as HeldEvent
    const token = new URL(event.approval.page_url).searchParams.get('token')!
    expect((await call(`/approvals?token=${encodeURIComponent(`${token.slice(0, -2)}ff`)}`)).status).toBe(403)
    expect((await call('/approvals')).status).toBe(403)
    expect((await postPage(`${token}x`, 'approve')).status).toBe(403)
  })
})

describe('messages in the lists', () => {
  it('shows a held message in GET /messages with its status', async () => {
    const { t, agent } = await setup()
    const { message_id: id } = await body<{ message_id: string }>(await sendAs(agent.key, 'stranger', 'Hi'))
    const list = await body<{ messages: WireMessageBody[] }>(await call('/v1/messages', { key: t.key }))
    expect(list.messages.find((m) => m.id === id)).toMatchObject({ status: 'awaiting_approval', direction: 'outbound' })
  })
})
