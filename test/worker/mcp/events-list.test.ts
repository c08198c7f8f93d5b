// The 2026-07-28 revision (server/discover, removed methods, tools with the envelope) and MCP Events (SEP-3415)
// discovery: events/list with the argument and payload schemas, in both protocol eras, narrowed to what the key may follow.
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { AccountEventPayload, EventFilter, MessageEventPayload, SUBSCRIBABLE_EVENTS } from '../../../schema/events'
import { inputJsonSchema } from '../../../worker/mcp/json-schema'
import { admin, newTenant } from '../helpers'
import { events, mintKey, modernRpc } from './events-helpers'

/** The SEP-3415 `events/list` result, as the SEP writes it. */
const EventDescriptor = z.object({
  name: z.string(),
  description: z.string().optional(),
  delivery: z.array(z.enum(['poll', 'push', 'webhook'])).min(1),
  inputSchema: z.looseObject({ type: z.literal('object') }),
  payloadSchema: z.looseObject({ type: z.literal('object') }),
  _meta: z.record(z.string(), z.unknown()).optional(),
})
const ListEventsResult = z.object({ events: z.array(EventDescriptor), nextCursor: z.string().optional() })

describe('server/discover (2026-07-28)', () => {
  it('lists 2026-07-28 and advertises the Events extension and the tools', async () => {
    const t = await newTenant()
    const answer = await modernRpc(t.key, 'server/discover')
    expect(answer.status).toBe(200)
    expect(answer.result).toMatchObject({
      resultType: 'complete',
      supportedVersions: ['2026-07-28'],
      capabilities: { tools: {}, extensions: { 'io.modelcontextprotocol/events': {} } },
      _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'messaging-gateway', version: '1.0.0' } },
    })
  })
})

describe('2026-07-28 requests', () => {
  it('answer initialize and ping, which that revision removed, with 404 -32601', async () => {
    const t = await newTenant()
    for (const method of ['initialize', 'ping']) {
      const answer = await modernRpc(t.key, method)
      expect(answer.status, method).toBe(404)
      expect(answer.error?.code, method).toBe(-32601)
    }
  })

  it('serve tools with the revision envelope, results marked complete', async () => {
    const t = await newTenant()
    const answer = await modernRpc(t.key, 'tools/call', { name: 'list_accounts', arguments: {} })
    expect(answer.result).toMatchObject({ resultType: 'complete', isError: false, content: [{ type: 'text', text: expect.stringMatching(/^HTTP 200\n/) }] })
    const bad = await modernRpc(t.key, 'tools/call', { name: 'list_accounts', arguments: 'nope' })
    expect(bad.error).toMatchObject({ code: -32602, message: expect.stringContaining('arguments') })
  })
})

describe.each(['legacy', 'modern'] as const)('events/list (%s era)', (era) => {
  it('names the nine spec events and message.approval_required with every delivery mode, in the SEP shape', async () => {
    const t = await newTenant()
    const answer = await events(era, t.key, 'events/list')
    const list = ListEventsResult.parse(answer.result)
    expect(list.events.map((e) => e.name)).toEqual([...SUBSCRIBABLE_EVENTS])
    expect(list.events.every((e) => e.delivery.join() === 'poll,push,webhook')).toBe(true)
    expect(list.nextCursor).toBeUndefined()
  })

  it('gives the webhook payload zod as payloadSchema (event pinned) and the subscription filter as inputSchema', async () => {
    const t = await newTenant()
    const list = ListEventsResult.parse((await events(era, t.key, 'events/list')).result)
    const received = list.events.find((e) => e.name === 'message.received')!
    expect(received.payloadSchema).toEqual(inputJsonSchema(MessageEventPayload.extend({ event: z.literal('message.received') })))
    expect(received.inputSchema).toEqual(inputJsonSchema(EventFilter))
    expect(Object.keys(received.inputSchema.properties as object)).toEqual(['account_ids', 'channel', 'contact_id', 'contact_phone'])
    const connected = list.events.find((e) => e.name === 'account.connected')!
    expect(connected.payloadSchema).toEqual(inputJsonSchema(AccountEventPayload.extend({ event: z.literal('account.connected') })))
    // Account events have no contact to filter on.
    expect(Object.keys(connected.inputSchema.properties as object)).toEqual(['account_ids', 'channel'])
  })
})

describe('events/list for narrower keys and tenants', () => {
  it('hides message.approval_required from a read key (its links approve messages)', async () => {
    const t = await newTenant()
    const reader = await mintKey(t, { scope: 'read' })
    const names = ListEventsResult.parse((await events('modern', reader, 'events/list')).result).events.map((e) => e.name)
    expect(names).not.toContain('message.approval_required')
    expect(names).toContain('message.received')
  })

  it('offers poll and push only while webhooks are switched off for the tenant', async () => {
    const t = await newTenant()
    expect((await admin(`/admin/tenants/${t.tenantId}`, { method: 'PATCH', json: { webhooks_enabled: false } })).status).toBe(200)
    const list = ListEventsResult.parse((await events('legacy', t.key, 'events/list')).result)
    expect(list.events.every((e) => e.delivery.join() === 'poll,push')).toBe(true)
  })
})
