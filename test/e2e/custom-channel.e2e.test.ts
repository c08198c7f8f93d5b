/**
 * Black box against the real local server (wrangler dev): a tenant connects the custom channel to a local receiver,
 * a person writes in, a waiting client receives it, replies, and the receiver gets the reply while its status turns sent.
 */
import { describe, expect, it } from 'vitest'
import { localSuite } from './local-suite'

const local = localSuite()

const api = local.api

describe('custom channel end to end on the local server', () => {
  it('takes an inbound message to a wait, and a reply to the receiver with status sent', async () => {
    const { key } = await local.server.newTenant()
    const put = await api(key, 'PUT', '/channels/custom', { webhook_url: `${local.receiver.url}/r/bridge?token=abc` })
    expect(put.status).toBe(200)
    expect(put.json).toMatchObject({ status: 'connected', webhook_url: `${local.receiver.url}/***` })

    const start = await api<{ cursor: string }>(key, 'GET', '/messages/wait?timeout_s=0')
    const waiting = api<{ messages: { id: string; text: string; contact: { id: string; external_id: string } }[]; cursor: string }>(
      key,
      'GET',
      `/messages/wait?timeout_s=20&cursor=${start.json.cursor}`
    )
    const pushed = await api(key, 'POST', '/channels/custom/inbound', { customData: { body: 'Is the shop open?', fromId: 'user-7', firstName: 'Ada' } })
    expect(pushed.status).toBe(200)
    const got = await waiting
    expect(got.status).toBe(200)
    expect(got.json.messages.map((m) => m.text)).toEqual(['Is the shop open?'])
    const contact = got.json.messages[0]!.contact
    expect(contact.external_id).toBe('user-7')

    const reply = await api<{ message_id: string; status: string }>(key, 'POST', '/messages', { to: { contact_id: contact.id }, text: 'Yes, until 6pm.' })
    expect(reply.status).toBe(202)
    expect(reply.json.status).toBe('queued')

    const deadline = Date.now() + 10_000
    let status = 'queued'
    while (status === 'queued' && Date.now() < deadline) {
      status = (await api<{ status: string }>(key, 'GET', `/messages/${reply.json.message_id}`)).json.status
      if (status === 'queued') await new Promise((r) => setTimeout(r, 50))
    }
    expect(status).toBe('sent')
    const delivered = local.receiver.log('bridge')
    expect(delivered).toHaveLength(1)
    expect(delivered[0]!.path).toBe('/r/bridge?token=abc')
    expect(delivered[0]!.json).toMatchObject({
      messageId: reply.json.message_id,
      contactId: contact.id,
      toId: 'user-7',
      body: 'Yes, until 6pm.',
      isVoiceNote: false,
    })
  })
})
