/**
 * MCP Events (SEP-3415) end to end through the real local server (wrangler dev), driven by the official SDK 2.x
 * client: it connects at 2026-07-28 (server/discover) while a 2025-era client still connects; events/list has the
 * SEP's shapes; poll, stream and webhook each deliver a message.received pushed through the custom channel exactly
 * once and resume by cursor after the connection (or the subscription) dropped; webhook deliveries, and REST webhook
 * deliveries too, verify with the `standardwebhooks` npm package; a lapsed TTL stops deliveries; a foreign Origin
 * and a private callback URL are refused.
 */
import { Client, ProtocolError, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { Webhook } from 'standardwebhooks'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import type { Received } from '../fixtures/receiver-types'
import { localSuite } from './local-suite'
import { callTool, connectMcp } from './mcp-client'

const local = localSuite()

/** The SEP-3415 result shapes this test holds the server to. */
const Occurrence = z.object({
  eventId: z.string(),
  name: z.string(),
  timestamp: z.iso.datetime(),
  data: z.record(z.string(), z.unknown()),
  cursor: z.string().nullable().optional(),
})
const ListEventsResult = z.object({
  events: z.array(
    z.object({
      name: z.string(),
      description: z.string().optional(),
      delivery: z.array(z.enum(['poll', 'push', 'webhook'])).min(1),
      inputSchema: z.looseObject({ type: z.literal('object') }),
      payloadSchema: z.looseObject({ type: z.literal('object') }),
    })
  ),
  nextCursor: z.string().optional(),
})
const PollResult = z.object({
  events: z.array(Occurrence),
  cursor: z.string().nullable(),
  truncated: z.boolean(),
  hasMore: z.boolean(),
  nextPollMs: z.number(),
})
const SubscribeResult = z.object({ id: z.string(), refreshBefore: z.string().nullable(), cursor: z.string().nullable(), truncated: z.boolean() })
const StreamResult = z.looseObject({})

let key: string
let client: Client

async function modernClient(headers: Record<string, string>): Promise<Client> {
  const c = new Client({ name: 'events-e2e', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } })
  await c.connect(new StreamableHTTPClientTransport(new URL(`${local.server.url}/mcp`), { requestInit: { headers } }))
  return c
}

const push = (text: string, fromId = 'person-7') =>
  fetch(`${local.server.url}/v1/channels/custom/inbound`, {
    method: 'POST',
    headers: { 'X-API-Key': key, 'Content-Type': 'application/json' },
    body: JSON.stringify({ customData: { body: text, fromId } }),
  }).then((r) => expect(r.status).toBe(200))

const textOf = (o: { data: Record<string, unknown> }) => (o.data.message as { text: string }).text

/** A receiver channel of the local receiver, answering the callback challenge. */
function channel(name: string) {
  const url = `${local.receiver.url}/r/${name}`
  return {
    url,
    behave: (b: Record<string, unknown>) => fetch(`${local.receiver.url}/__behaviour/${name}`, { method: 'PUT', body: JSON.stringify(b) }),
    waitFor: async (count: number, timeoutMs = 10_000): Promise<Received[]> =>
      (await fetch(`${local.receiver.url}/__wait/${name}?count=${count}&timeout_ms=${timeoutMs}`)).json() as Promise<Received[]>,
    log: () => local.receiver.log(name),
  }
}
const events = (log: Received[]) => log.filter((r) => (r.json as { type?: string } | null)?.type === undefined)

function clientSecret(): string {
  return `whsec_${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64')}`
}

beforeAll(async () => {
  ;({ key } = await local.server.newTenant())
  client = await modernClient({ 'X-API-Key': key })
  const connected = await callTool(client, 'set_custom_channel_webhook', { body: { webhook_url: `${local.receiver.url}/r/bridge?token=s3cret` } })
  expect(connected.status).toBe(200)
})

afterAll(async () => {
  await client?.close()
})

describe('MCP protocol revisions', () => {
  it('connects at 2026-07-28 through server/discover, with the Events extension, and runs tools', async () => {
    expect(client.getServerVersion()).toMatchObject({ name: 'messaging-gateway', version: '1.0.0' })
    expect(client.getServerCapabilities()).toMatchObject({ tools: {}, extensions: { 'io.modelcontextprotocol/events': {} } })
    const { tools } = await client.listTools()
    expect(tools.map((t) => t.name)).toContain('wait_for_messages')
    const accounts = await callTool(client, 'list_accounts')
    expect(accounts).toMatchObject({ status: 200, isError: false })
  })

  it('still serves a 2025-era client: initialize answers 2025-06-18 to a client asking for it', async () => {
    const legacy = await connectMcp(local.server.url, { 'X-API-Key': key })
    try {
      expect((await callTool(legacy.client, 'list_accounts')).status).toBe(200)
    } finally {
      await legacy.client.close()
    }
    const res = await fetch(`${local.server.url}/mcp`, {
      method: 'POST',
      headers: { 'X-API-Key': key, Accept: 'application/json, text/event-stream', 'Content-Type': 'application/json' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'old', version: '1' } },
      }),
    })
    expect(await res.json()).toMatchObject({ result: { protocolVersion: '2025-06-18', serverInfo: { version: '1.0.0' } } })
  })
})

describe('MCP events with the SDK 2.x client', () => {
  it('events/list answers in the SEP shape, naming the gateway events', async () => {
    const list = ListEventsResult.parse(await client.request({ method: 'events/list', params: {} }, ListEventsResult))
    expect(list.events.map((e) => e.name)).toEqual(
      expect.arrayContaining(['message.received', 'message.sent', 'account.connected', 'message.approval_required'])
    )
  })

  it('poll: a message.received arrives exactly once, and a poll dropped mid-wait resumes from its cursor', async () => {
    const start = await client.request({ method: 'events/poll', params: { name: 'message.received' } }, PollResult)
    // The client gives up on a held poll (its connection drops); the message comes while nobody waits.
    const dropped = new AbortController()
    const abandoned = client.request({ method: 'events/poll', params: { name: 'message.received', cursor: start.cursor, timeoutMs: 20_000 } }, PollResult, {
      signal: dropped.signal,
    })
    await new Promise((r) => setTimeout(r, 300))
    dropped.abort()
    await expect(abandoned).rejects.toThrow()
    await push('poll me')
    const got = await client.request({ method: 'events/poll', params: { name: 'message.received', cursor: start.cursor, timeoutMs: 10_000 } }, PollResult)
    expect(got.events.map(textOf)).toEqual(['poll me'])
    const after = await client.request({ method: 'events/poll', params: { name: 'message.received', cursor: got.cursor, timeoutMs: 500 } }, PollResult)
    expect(after.events).toEqual([])
  })

  it('stream: events come as notifications once each, and a new stream resumes from the last cursor after a dropped connection', async () => {
    const seen: Array<z.infer<typeof Occurrence>> = []
    let active = 0
    client.setNotificationHandler('notifications/events/event', { params: z.looseObject({}) }, (p) => void seen.push(Occurrence.parse(p)))
    client.setNotificationHandler('notifications/events/active', { params: z.looseObject({}) }, () => void active++)
    const until = async (check: () => boolean, what: string) => {
      for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 50))
      expect(check(), what).toBe(true)
    }
    const first = new AbortController()
    const stream1 = client.request({ method: 'events/stream', params: { name: 'message.received' } }, StreamResult, { signal: first.signal, timeout: 120_000 })
    stream1.catch(() => undefined)
    await until(() => active === 1, 'the stream is confirmed')
    await push('stream me')
    await until(() => seen.length === 1, 'the event arrives')
    const cursor = seen[0]!.cursor!
    first.abort()
    await push('while the stream was down')
    const second = new AbortController()
    const stream2 = client.request({ method: 'events/stream', params: { name: 'message.received', cursor } }, StreamResult, {
      signal: second.signal,
      timeout: 120_000,
    })
    stream2.catch(() => undefined)
    await until(() => seen.length === 2, 'the missed event arrives on the new stream')
    await new Promise((r) => setTimeout(r, 500))
    second.abort()
    expect(seen.map(textOf)).toEqual(['stream me', 'while the stream was down'])
    expect(new Set(seen.map((e) => e.eventId)).size).toBe(2)
  })

  it('webhook: verified callback, deliveries signed for standardwebhooks, stopped by a lapsed TTL, resumed by cursor, never twice', async () => {
    const hook = channel('mcp-webhook')
    const secret = clientSecret()
    await hook.behave({ echo_challenge: true })
    const subscribe = (extra: Record<string, unknown>) =>
      client.request(
        { method: 'events/subscribe', params: { name: 'message.received', delivery: { mode: 'webhook', url: hook.url, secret }, ttlMs: 3000, ...extra } },
        SubscribeResult
      )
    const sub = await subscribe({})
    expect(sub.id).toMatch(/^sub_/)
    await push('webhook me')
    const [challenge, delivered] = await hook.waitFor(2)
    expect((challenge!.json as { type: string }).type).toBe('verification')
    expect(delivered!.headers['x-mcp-subscription-id']).toBe(sub.id)
    // The receiver's own check, with the reference library, over the raw body.
    const occurrence = Occurrence.parse(new Webhook(secret).verify(delivered!.body, delivered!.headers))
    expect(textOf(occurrence)).toBe('webhook me')
    expect(delivered!.headers['webhook-id']).toBe(occurrence.eventId)

    // The client stops refreshing: once the TTL is over, nothing more is delivered.
    await new Promise((r) => setTimeout(r, Math.max(0, Date.parse(sub.refreshBefore!) - Date.now()) + 200))
    await push('during the lapse')
    await new Promise((r) => setTimeout(r, 1500))
    expect(events(hook.log()).map((r) => textOf(Occurrence.parse(r.json)))).toEqual(['webhook me'])

    // It comes back with the cursor of the last delivery it accepted: what it missed is delivered, once.
    const back = await subscribe({ cursor: occurrence.cursor })
    expect(back.id).toBe(sub.id)
    const after = await hook.waitFor(3)
    const caughtUp = Occurrence.parse(new Webhook(secret).verify(after[2]!.body, after[2]!.headers))
    expect(textOf(caughtUp)).toBe('during the lapse')
    await new Promise((r) => setTimeout(r, 500))
    expect(events(hook.log()).map((r) => textOf(Occurrence.parse(r.json)))).toEqual(['webhook me', 'during the lapse'])
    const listed = (await local.api<{ webhooks: Array<Record<string, unknown>> }>(key, 'GET', '/webhooks')).json.webhooks
    expect(listed).toContainEqual(expect.objectContaining({ url: hook.url, origin: 'mcp', subscribed_to: ['message.received'] }))
  })

  it('refuses a private callback URL, and a browser page from a foreign origin', async () => {
    const refused = client.request(
      {
        method: 'events/subscribe',
        params: { name: 'message.received', delivery: { mode: 'webhook', url: 'https://10.1.2.3/hooks', secret: clientSecret() } },
      },
      SubscribeResult
    )
    await expect(refused).rejects.toSatisfy((e: unknown) => e instanceof ProtocolError && e.code === -32602)
    await expect(modernClient({ 'X-API-Key': key, Origin: 'https://evil.example' })).rejects.toThrow(/403|Origin/)
  })
})

describe('REST webhooks carry Standard Webhooks signatures', () => {
  it('a live delivery verifies with the standardwebhooks package and the webhook signing secret', async () => {
    const inbox = channel('rest-standard')
    const created = await local.api<{ signing_secret: string }>(key, 'POST', '/webhooks', {
      url: inbox.url,
      subscribed_to: ['message.received'],
      generate_signing_secret: true,
    })
    expect(created.status).toBe(201)
    await push('rest hook')
    const [delivery] = await inbox.waitFor(1)
    const payload = new Webhook(created.json.signing_secret).verify(delivery!.body, delivery!.headers)
    expect(payload).toMatchObject({ event: 'message.received', message: { text: 'rest hook' } })
    expect(delivery!.headers['webhook-id']).toBe(delivery!.headers['x-webhook-delivery'])
  })
})
