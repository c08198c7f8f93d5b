// The Graph client and the webhook modules against the fake Graph API: versions checked, errors carried with their
// codes, signatures over raw bytes, payloads of both objects parsed.
import { inject, describe, expect, it } from 'vitest'
import { env } from 'cloudflare:workers'
import { fakeGraphApp } from '../../../fixtures/fake-graph-types'
import { GraphClient, GraphError } from '../../../../worker/channels/social/graph-client'
import { WebhookPayload, webhookEvents } from '../../../../worker/channels/social/payloads'
import { hubSignature, verifyHubSignature } from '../../../../worker/channels/social/signature'
import { newAppId, PAGE_A, SECRET } from './social-helpers'

const bytes = (s: string) => new TextEncoder().encode(s)

describe('GraphClient', () => {
  it('is refused by Graph when it speaks another API version, and carries Graph’s code', async () => {
    const appId = newAppId()
    await fakeGraphApp(inject('fakeGraphUrl'), appId).register(SECRET, '1', [PAGE_A])
    const old = new GraphClient({ ...env, GRAPH_API_VERSION: 'v19.0' })
    const err = await old.exchangeCode({ appId, secret: SECRET }, 'https://x.test/cb', 'code').catch((e: unknown) => e)
    expect(err).toBeInstanceOf(GraphError)
    expect(err).toMatchObject({ code: 2635 })
  })

  it('answers a refused code with Graph’s code, and an unreachable Graph with no code', async () => {
    const appId = newAppId()
    await fakeGraphApp(inject('fakeGraphUrl'), appId).register(SECRET, '1', [PAGE_A])
    const err = await new GraphClient(env).exchangeCode({ appId, secret: SECRET }, 'https://x.test/cb', 'not-a-code').catch((e: unknown) => e)
    expect(err).toMatchObject({ code: 100 })
    const down = await new GraphClient({ ...env, GRAPH_API_URL: 'http://127.0.0.1:9' }).pages('t').catch((e: unknown) => e)
    expect(down).toMatchObject({ code: null, status: 0 })
  })

  it('builds the Login for Business dialog URL with config_id and response_type=code', () => {
    const url = new URL(
      GraphClient.dialogUrl(
        { ...env, GRAPH_DIALOG_URL: 'https://www.facebook.com', GRAPH_API_VERSION: 'v25.0' },
        { appId: '1', configId: '2', redirectUri: 'https://g.test/cb', state: 's' }
      )
    )
    expect(url.origin + url.pathname).toBe('https://www.facebook.com/v25.0/dialog/oauth')
    expect(Object.fromEntries(url.searchParams)).toEqual({
      client_id: '1',
      redirect_uri: 'https://g.test/cb',
      state: 's',
      config_id: '2',
      response_type: 'code',
    })
  })
})

describe('X-Hub-Signature-256', () => {
  it('verifies the HMAC of the raw bytes under the app secret, and nothing else', async () => {
    const raw = bytes('{"object":"page","entry":[]}')
    const sig = await hubSignature(SECRET, raw)
    expect(await verifyHubSignature(SECRET, raw, sig)).toBe(true)
    expect(await verifyHubSignature(SECRET, raw, sig.toUpperCase().replace('SHA256=', 'sha256='))).toBe(true)
    expect(await verifyHubSignature('other-secret', raw, sig)).toBe(false)
    expect(await verifyHubSignature(SECRET, bytes('{"object": "page","entry":[]}'), sig)).toBe(false)
    expect(await verifyHubSignature(SECRET, raw, sig.replace('sha256=', 'sha1='))).toBe(false)
    expect(await verifyHubSignature(SECRET, raw, undefined)).toBe(false)
  })
})

describe('webhook payloads', () => {
  it('reads messages, replies, echoes, deliveries, reads and reactions of both objects; other items are other', () => {
    const page = WebhookPayload.parse({
      object: 'page',
      entry: [
        {
          id: '1001',
          time: 1,
          messaging: [
            {
              sender: { id: 'P' },
              recipient: { id: '1001' },
              timestamp: 5,
              message: { mid: 'm1', text: 'hi', attachments: [{ type: 'file', payload: { url: 'https://cdn/x.pdf' } }] },
            },
            { sender: { id: '1001' }, recipient: { id: 'P' }, message: { mid: 'm2', text: 'ours', is_echo: true } },
            { sender: { id: 'P' }, recipient: { id: '1001' }, delivery: { mids: ['m2'], watermark: 9 } },
            { sender: { id: 'P' }, recipient: { id: '1001' }, read: { watermark: 10 } },
            // Not the documented message_reactions shape (no action): other, and the items around it still count.
            { sender: { id: 'P' }, recipient: { id: '1001' }, reaction: { reaction: 'love', mid: 'm2' } },
            { sender: { id: 'P' }, recipient: { id: '1001' }, timestamp: 11, reaction: { reaction: 'love', emoji: '❤️', action: 'react', mid: 'm2' } },
            { sender: { id: 'P' }, recipient: { id: '1001' }, timestamp: 12, reaction: { action: 'unreact', mid: 'm2' } },
            { sender: { id: 'P' }, recipient: { id: '1001' }, timestamp: 13, message: { mid: 'm4', text: 'yes', reply_to: { mid: 'm2' } } },
          ],
        },
      ],
    })
    expect(webhookEvents(page)).toEqual([
      {
        kind: 'message',
        surface: 'page',
        ownerId: '1001',
        senderId: 'P',
        mid: 'm1',
        text: 'hi',
        attachments: [{ url: 'https://cdn/x.pdf', contentType: 'application/octet-stream', fileName: 'x.pdf', kind: 'document' }],
        at: 5,
        replyTo: null,
      },
      { kind: 'echo', surface: 'page', ownerId: '1001', mid: 'm2' },
      { kind: 'delivered', surface: 'page', ownerId: '1001', senderId: 'P', mids: ['m2'], watermark: 9 },
      { kind: 'read', surface: 'page', ownerId: '1001', senderId: 'P', watermark: 10, mid: null },
      { kind: 'other' },
      { kind: 'reaction', surface: 'page', ownerId: '1001', senderId: 'P', mid: 'm2', emoji: '❤️', at: 11 },
      { kind: 'reaction', surface: 'page', ownerId: '1001', senderId: 'P', mid: 'm2', emoji: null, at: 12 },
      { kind: 'message', surface: 'page', ownerId: '1001', senderId: 'P', mid: 'm4', text: 'yes', attachments: [], at: 13, replyTo: 'm2' },
    ])
    const ig = WebhookPayload.parse({
      object: 'instagram',
      entry: [{ id: '178', messaging: [{ sender: { id: 'I' }, recipient: { id: '178' }, read: { mid: 'm3' } }] }],
    })
    expect(webhookEvents(ig)).toEqual([{ kind: 'read', surface: 'instagram', ownerId: '178', senderId: 'I', watermark: null, mid: 'm3' }])
  })

  it('refuses another object', () => {
    expect(WebhookPayload.safeParse({ object: 'user', entry: [] }).success).toBe(false)
  })
})
