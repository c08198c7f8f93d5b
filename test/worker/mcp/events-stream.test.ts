// events/stream (SEP-3415 push delivery): an SSE answer that confirms the subscription, carries each event with
// the cursor after it and heartbeats in quiet times, resumes from a cursor after a dropped connection, frees the
// account's wait slot when the client goes away, and ends itself after STREAM_MAX_MS.
import { env } from 'cloudflare:workers'
import { describe, expect, it } from 'vitest'
import { database } from '../../../worker/db/client'
import { resolveSubscription } from '../../../worker/mcp/events/access'
import { HEARTBEAT_MS, STREAM_MAX_MS, streamEvents } from '../../../worker/mcp/events/stream'
import { fullGrant } from '../../../worker/safety/grant'
import { call, connectCustom, newTenant, pushInbound } from '../helpers'
import { mcpPost } from './rpc'
import { modernPost, sseMessages, type RpcMessage } from './events-helpers'

const open = (era: 'legacy' | 'modern', key: string, params: Record<string, unknown>, signal: AbortSignal) =>
  era === 'modern'
    ? modernPost(key, 'events/stream', params, { signal })
    : mcpPost({ jsonrpc: '2.0', id: 77, method: 'events/stream', params }, { key, signal })

const SUB = 'io.modelcontextprotocol/subscriptionId'

describe.each(['legacy', 'modern'] as const)('events/stream (%s era)', (era) => {
  it('confirms, pushes a message.received once with its cursor, and resumes from that cursor after a dropped connection', async () => {
    const t = await newTenant()
    await connectCustom(t)
    const first = new AbortController()
    const res = await open(era, t.key, { name: 'message.received' }, first.signal)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/)
    const stream = sseMessages(res)
    const active = (await stream.next())!
    expect(active.method).toBe('notifications/events/active')
    expect(active.params).toMatchObject({ cursor: expect.any(String), truncated: false, _meta: { [SUB]: expect.anything() } })

    await pushInbound(t, { body: 'first', fromId: 'p-1' })
    const event = (await stream.next())!
    expect(event.method).toBe('notifications/events/event')
    expect(event.params).toMatchObject({
      eventId: expect.stringMatching(/^evt_/),
      name: 'message.received',
      data: { message: { text: 'first' } },
      cursor: expect.any(String),
      _meta: { [SUB]: active.params!._meta && (active.params!._meta as Record<string, unknown>)[SUB] },
    })
    // The client drops the connection; a message arrives while it is away.
    first.abort()
    await stream.cancel()
    await pushInbound(t, { body: 'while away', fromId: 'p-1' })

    const again = sseMessages(await open(era, t.key, { name: 'message.received', cursor: event.params!.cursor }, new AbortController().signal))
    const resumed: RpcMessage[] = []
    for (let m = await again.next(); m; m = resumed.length < 2 ? await again.next() : undefined) resumed.push(m)
    expect(resumed.map((m) => m.method)).toEqual(['notifications/events/active', 'notifications/events/event'])
    expect(resumed[1]!.params).toMatchObject({ data: { message: { text: 'while away' } } })
    expect(await again.next(500)).toBeUndefined()
    await again.cancel()
  })
})

describe('events/stream', () => {
  it('refuses an invalid subscription with a JSON-RPC error and opens no stream', async () => {
    const t = await newTenant()
    const res = await modernPost(t.key, 'events/stream', { name: 'nope' })
    expect(res.headers.get('content-type')).toMatch(/^application\/json/)
    expect(await res.json()).toMatchObject({ error: { code: -32023 } })
  })

  it("frees the account's wait slot as soon as the client goes away", async () => {
    const t = await newTenant()
    await connectCustom(t)
    for (let i = 0; i < 3; i++) {
      const gone = new AbortController()
      const stream = sseMessages(await modernPost(t.key, 'events/stream', { name: 'message.received' }, { signal: gone.signal }))
      expect((await stream.next())?.method).toBe('notifications/events/active')
      gone.abort()
      await stream.cancel()
    }
    await new Promise((r) => setTimeout(r, 200))
    // Both slots (2 per account) are free again: two REST waits run side by side.
    const waits = await Promise.all([0, 1].map(() => call('/v1/messages/wait?timeout_s=0', { key: t.key })))
    expect(waits.map((w) => w.status)).toEqual([200, 200])
  })

  it('sends a heartbeat with the position checked when nothing happens, and ends itself after STREAM_MAX_MS', async () => {
    const t = await newTenant()
    // A clock that moves a heartbeat interval per look: the loop runs through minutes of quiet in a moment.
    let clock = Date.now()
    const now = () => (clock += HEARTBEAT_MS)
    const started = Date.now()
    const sent: Array<{ method: string; params?: Record<string, unknown> }> = []
    const result = await streamEvents(
      { env, db: database(env.DB), tenantId: t.tenantId, placement: 0 },
      resolveSubscription(fullGrant('key'), 'account.connected', {}),
      { name: 'account.connected' },
      { id: 5, notify: async (n) => void sent.push(n), signal: new AbortController().signal },
      now
    )
    expect(result).toEqual({ _meta: { [SUB]: 5 } })
    const methods = sent.map((n) => n.method)
    expect(methods[0]).toBe('notifications/events/active')
    expect(methods.filter((m) => m === 'notifications/events/heartbeat').length).toBeGreaterThanOrEqual(1)
    expect(clock - started).toBeGreaterThanOrEqual(STREAM_MAX_MS)
    expect(Date.now() - started).toBeLessThan(5000)
    expect(sent.find((n) => n.method === 'notifications/events/heartbeat')?.params).toMatchObject({ cursor: expect.any(String), _meta: { [SUB]: 5 } })
  })
})
