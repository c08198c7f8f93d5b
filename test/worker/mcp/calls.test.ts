// tools/call: each tool runs its REST operation in-process with the caller's key, against the same fixtures as the
// REST tests (a tenant per test, the custom channel on the local receiver). MCP and REST answers must be identical.
import { describe, expect, it } from 'vitest'
import { NOT_IMPLEMENTED } from '../../../worker/channels/planned'
import { TOOLS } from '../../../worker/mcp/tools'
import { body, call, connectCustom, newTenant, pushInbound, receiverChannel, type TestTenant } from '../helpers'
import { callTool, MCP_ACCEPT, rpc } from './rpc'

async function rest(t: TestTenant, path: string) {
  const res = await call(`/v1${path}`, { key: t.key })
  return { status: res.status, json: await body(res) }
}

type Wire = { id: string; text: string; status: string; direction: string; contact: { id: string; external_id: string | null } }

/**
 * A wait_for_messages call that stays open: re-issued when it met a full account, which happens when a probe of
 * pollWait held the second slot at the moment it arrived.
 */
async function heldWait(key: string, args: Record<string, unknown>, signal?: AbortSignal) {
  for (;;) {
    const got = await callTool(key, 'wait_for_messages', args, { signal })
    if (got.status !== 429) return got
  }
}

/** Probes the account's wait slots with REST waits of timeout 0 until one answers `want` (429: both slots held). */
async function pollWait(t: TestTenant, want: number): Promise<number> {
  let status = 0
  for (let i = 0; i < 500 && status !== want; i++) {
    status = (await call('/v1/messages/wait?timeout_s=0', { key: t.key })).status
    if (status !== want) await new Promise((r) => setTimeout(r, 10))
  }
  return status
}

/** A tenant with the custom channel connected and one inbound message from `user-1`. */
async function withConversation() {
  const t = await newTenant()
  const ch = await connectCustom(t)
  const pushed = await pushInbound(t, { body: 'Hello, are you open today?', fromId: 'user-1', firstName: 'Ada' })
  expect(pushed.status).toBe(200)
  return { t, ch, contactId: String(pushed.body.contact_id), inboundId: String(pushed.body.message_id) }
}

describe('list_accounts', () => {
  it('answers HTTP 200 and exactly the body of GET /v1/accounts', async () => {
    const t = await newTenant()
    await connectCustom(t)
    const tool = await callTool(t.key, 'list_accounts')
    expect(tool.status).toBe(200)
    expect(tool.isError).toBe(false)
    expect(tool.json).toEqual((await rest(t, '/accounts')).json)
    expect(tool.json).toMatchObject({ accounts: [{ id: 'custom', channel: 'custom', status: 'connected' }] })
  })

  it("shows only the caller's accounts", async () => {
    const a = await newTenant()
    await connectCustom(a)
    const b = await newTenant()
    expect((await callTool(b.key, 'list_accounts')).json).toEqual({ accounts: [] })
  })
})

describe('get_usage', () => {
  it('answers the body of GET /v1/usage', async () => {
    const t = await newTenant()
    const tool = await callTool(t.key, 'get_usage')
    expect(tool.status).toBe(200)
    expect(tool.json).toEqual((await rest(t, '/usage')).json)
  })
})

describe('set_custom_channel_webhook, get_custom_channel_status, disconnect_custom_channel', () => {
  it('connects, reports and removes the custom channel', async () => {
    const t = await newTenant()
    const ch = receiverChannel('mcp-custom')
    const set = await callTool(t.key, 'set_custom_channel_webhook', { body: { webhook_url: ch.url } })
    expect(set.status).toBe(200)
    expect(set.json).toMatchObject({ success: true, account_id: 'custom', status: 'connected' })
    const status = await callTool(t.key, 'get_custom_channel_status')
    expect(status.json).toEqual((await rest(t, '/channels/custom')).json)
    const gone = await callTool(t.key, 'disconnect_custom_channel')
    expect(gone.json).toMatchObject({ success: true, status: 'removed' })
    expect((await callTool(t.key, 'disconnect_custom_channel')).json).toMatchObject({ success: true, status: 'not_connected' })
  })

  it('passes the REST refusal of a private URL through as HTTP 400 with isError', async () => {
    const t = await newTenant()
    const set = await callTool(t.key, 'set_custom_channel_webhook', { body: { webhook_url: 'https://10.0.0.1/hook' } })
    expect(set.status).toBe(400)
    expect(set.isError).toBe(true)
    expect(set.json).toMatchObject({ success: false, error_code: 400 })
  })
})

describe('push_custom_channel_message', () => {
  it('stores an inbound message that list_messages then shows', async () => {
    const t = await newTenant()
    await connectCustom(t)
    const pushed = await callTool(t.key, 'push_custom_channel_message', { body: { customData: { body: 'Hi there', fromId: 'u-9', messageSid: 's-1' } } })
    expect(pushed.status).toBe(200)
    expect(pushed.json).toMatchObject({ success: true, duplicate: false })
    const again = await callTool(t.key, 'push_custom_channel_message', { body: { customData: { body: 'Hi there', fromId: 'u-9', messageSid: 's-1' } } })
    expect(again.json).toMatchObject({ duplicate: true, message_id: pushed.json.message_id })
  })

  it('answers the REST validation error for a missing body', async () => {
    const t = await newTenant()
    await connectCustom(t)
    const pushed = await callTool(t.key, 'push_custom_channel_message', { body: { customData: { fromId: 'u-9' } } })
    expect(pushed.status).toBe(400)
    expect(pushed.isError).toBe(true)
  })
})

describe('wait_for_messages', () => {
  it('holds the MCP request open until a message arrives, and returns it with the next cursor', async () => {
    const t = await newTenant()
    await connectCustom(t)
    const start = await callTool(t.key, 'wait_for_messages', { timeout_s: 0 })
    expect(start.json).toEqual({ messages: [], cursor: expect.any(String) })
    const waiting = [0, 1].map(() => heldWait(t.key, { cursor: start.json.cursor, timeout_s: 20 }))
    // Both MCP calls are open on the account once a third wait is refused: the push lands while they wait.
    expect(await pollWait(t, 429)).toBe(429)
    const third = await callTool(t.key, 'wait_for_messages', { timeout_s: 0 })
    expect(third.status).toBe(429)
    expect(third.json).toMatchObject({ error_code: 'wait_concurrency' })
    await pushInbound(t, { body: 'Are you there?', fromId: 'user-2' })
    for (const got of await Promise.all(waiting)) {
      expect(got.status).toBe(200)
      expect((got.json.messages as Wire[]).map((m) => m.text)).toEqual(['Are you there?'])
      expect(got.json.cursor).not.toBe(start.json.cursor)
    }
  })

  it('frees the wait slot when the MCP client disconnects mid-call', async () => {
    const t = await newTenant()
    await connectCustom(t)
    const drops = [new AbortController(), new AbortController()]
    const held = drops.map((ac) => heldWait(t.key, { timeout_s: 55 }, ac.signal).catch(() => 'dropped'))
    expect(await pollWait(t, 429)).toBe(429)
    for (const ac of drops) ac.abort()
    expect(await Promise.all(held)).toEqual(['dropped', 'dropped'])
    // Long before the 55 s timeout: the disconnect reached the account's Durable Object through the REST call.
    expect(await pollWait(t, 200)).toBe(200)
  })

  it('returns an empty list after timeout_s', async () => {
    const t = await newTenant()
    await connectCustom(t)
    const started = Date.now()
    const got = await callTool(t.key, 'wait_for_messages', { timeout_s: 1 })
    expect(Date.now() - started).toBeGreaterThanOrEqual(900)
    expect(got.json.messages).toEqual([])
  })

  it('answers HTTP 400 invalid_cursor and HTTP 400 invalid_timeout as REST does', async () => {
    const t = await newTenant()
    const cursor = await callTool(t.key, 'wait_for_messages', { cursor: 'not-a-cursor', timeout_s: 0 })
    expect(cursor.status).toBe(400)
    expect(cursor.json).toMatchObject({ error_code: 'invalid_cursor' })
    const timeout = await callTool(t.key, 'wait_for_messages', { timeout_s: 56 })
    expect(timeout.json).toEqual((await rest(t, '/messages/wait?timeout_s=56')).json)
    expect(timeout.json).toMatchObject({ error_code: 'invalid_timeout' })
  })
})

describe('send_message and get_message', () => {
  it('replies to the person who wrote, and get_message shows the status turning sent', async () => {
    const { t, ch, contactId } = await withConversation()
    const sent = await callTool(t.key, 'send_message', { body: { to: { contact_id: contactId }, text: 'Yes, until 6pm.' } })
    expect(sent.status).toBe(202)
    expect(sent.json).toEqual({ message_id: expect.any(String), status: 'queued' })
    const [delivered] = await ch.waitFor(1)
    expect(delivered!.json).toMatchObject({ messageId: sent.json.message_id, toId: 'user-1', body: 'Yes, until 6pm.' })
    let message = (await callTool(t.key, 'get_message', { id: sent.json.message_id })).json as unknown as Wire
    for (let i = 0; i < 50 && message.status === 'queued'; i++) {
      await new Promise((r) => setTimeout(r, 20))
      message = (await callTool(t.key, 'get_message', { id: sent.json.message_id })).json as unknown as Wire
    }
    expect(message).toMatchObject({ id: sent.json.message_id, direction: 'outbound', status: 'sent' })
    expect(message).toEqual((await rest(t, `/messages/${message.id}`)).json)
  })

  it('answers the field-specific REST error for an empty text', async () => {
    const { t, contactId } = await withConversation()
    const sent = await callTool(t.key, 'send_message', { body: { to: { contact_id: contactId }, text: '' } })
    expect(sent.status).toBe(400)
    expect(sent.isError).toBe(true)
    expect(sent.json).toMatchObject({ error_code: 'invalid_text' })
  })

  it('answers HTTP 409 no_connected_account for a tenant without accounts', async () => {
    const t = await newTenant()
    const sent = await callTool(t.key, 'send_message', { body: { to: { external_id: 'x' }, text: 'Hi' } })
    expect(sent.status).toBe(409)
    expect(sent.json).toMatchObject({ error_code: 'no_connected_account' })
  })

  it('surfaces the loop guard on the fourth message to someone who has not replied', async () => {
    const { t, contactId } = await withConversation()
    for (let i = 1; i <= 3; i++) {
      expect((await callTool(t.key, 'send_message', { body: { to: { contact_id: contactId }, text: `Message ${i}` } })).status).toBe(202)
    }
    const fourth = await callTool(t.key, 'send_message', { body: { to: { contact_id: contactId }, text: 'Message 4' } })
    expect(fourth.status).toBe(429)
    expect(fourth.isError).toBe(true)
    expect(fourth.json).toMatchObject({ error_code: 'loop_guard' })
  })

  it("answers HTTP 404 for an unknown message and for another tenant's message", async () => {
    const { inboundId } = await withConversation()
    const other = await newTenant()
    for (const id of ['msg_unknown', inboundId]) {
      const got = await callTool(other.key, 'get_message', { id })
      expect(got.status).toBe(404)
      expect(got.isError).toBe(true)
      expect(got.json).toMatchObject({ error_code: 'message_not_found' })
    }
  })
})

describe('list_messages', () => {
  it('passes query arguments through and answers the REST page', async () => {
    const { t } = await withConversation()
    const all = await callTool(t.key, 'list_messages', {})
    expect(all.json).toEqual((await rest(t, '/messages')).json)
    const inbound = await callTool(t.key, 'list_messages', { direction: 'inbound', limit: 1 })
    expect(inbound.json).toEqual((await rest(t, '/messages?direction=inbound&limit=1')).json)
    expect((inbound.json.messages as Wire[]).map((m) => m.direction)).toEqual(['inbound'])
  })

  it('answers HTTP 400 invalid_limit for a limit over 100', async () => {
    const t = await newTenant()
    const got = await callTool(t.key, 'list_messages', { limit: 101 })
    expect(got.status).toBe(400)
    expect(got.json).toMatchObject({ error_code: 'invalid_limit' })
  })
})

describe('tools whose channel is not built yet', () => {
  it('answer HTTP 501 with isError, in the path family shape', async () => {
    const t = await newTenant()
    const pending = TOOLS.filter((tool) => NOT_IMPLEMENTED.some(([method, path]) => method === tool.method && path.replace(/:(\w+)/g, '{$1}') === tool.path))
    expect(pending.map((p) => p.name)).toHaveLength(NOT_IMPLEMENTED.length)
    for (const tool of pending) {
      const args: Record<string, unknown> = {}
      if (tool.path.includes('{phoneNumber}')) args.phoneNumber = '+15551234567'
      const got = await callTool(t.key, tool.name, args)
      expect(got.status, tool.name).toBe(501)
      expect(got.isError).toBe(true)
      expect(got.json).toEqual({ success: false, error: expect.stringContaining('not available yet'), error_code: 501 })
    }
  })
})

describe('arguments that cannot form a request', () => {
  it('answer -32602 for an unknown tool, as a protocol error', async () => {
    const t = await newTenant()
    const answer = await rpc(t.key, 'tools/call', { name: 'send_sms_now', arguments: {} })
    expect(answer.error?.code).toBe(-32602)
    expect(answer.error?.message).toContain('send_sms_now')
  })

  it('answer -32602 naming the expected arguments when a request field is outside body', async () => {
    const t = await newTenant()
    const answer = await rpc(t.key, 'tools/call', { name: 'send_message', arguments: { text: 'Hi', to: { contact_id: 'c' } } })
    expect(answer.error?.code).toBe(-32602)
    expect(answer.error?.message).toContain('inside body')
  })

  it('answer -32602 for a missing path parameter or a query value that is an object', async () => {
    const t = await newTenant()
    expect((await rpc(t.key, 'tools/call', { name: 'get_message', arguments: {} })).error?.code).toBe(-32602)
    expect((await rpc(t.key, 'tools/call', { name: 'list_messages', arguments: { limit: { n: 1 } } })).error?.code).toBe(-32602)
  })

  it('answer -32602 naming the field, not -32603 with raw schema issues, when arguments or name has the wrong type', async () => {
    const t = await newTenant()
    for (const args of ['x', [1], 5, null, true]) {
      const answer = await rpc(t.key, 'tools/call', { name: 'list_messages', arguments: args })
      expect(answer.status).toBe(200)
      expect(answer.error?.code, JSON.stringify(args)).toBe(-32602)
      expect(answer.error?.message).toMatch(/^Invalid params: params\.arguments: /)
      expect(answer.error?.message).not.toContain('"code"')
    }
    const unnamed = await rpc(t.key, 'tools/call', { name: 7, arguments: {} })
    expect(unnamed.error).toMatchObject({ code: -32602, message: expect.stringContaining('params.name') })
  })

  it('drop an own __proto__ argument, as the spec schema of tools/call does, instead of naming it unknown', async () => {
    const t = await newTenant()
    // JSON.parse makes `__proto__` an own key; a client's serialiser could send it as it was written here.
    const text = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_usage","arguments":{"__proto__":{"limit":1}}}}'
    const res = await call('/mcp', {
      method: 'POST',
      key: t.key,
      keyPlace: 'header',
      headers: { Accept: MCP_ACCEPT, 'Content-Type': 'application/json' },
      body: text,
    })
    const json = await body<{ result?: { content: { text: string }[] }; error?: unknown }>(res)
    expect(json.error, JSON.stringify(json.error)).toBeUndefined()
    expect(json.result?.content[0]?.text).toMatch(/^HTTP 200\n/)
  })

  it('encode a path parameter, so an id cannot reach another route', async () => {
    const { t } = await withConversation()
    const got = await callTool(t.key, 'get_message', { id: '../accounts' })
    expect(got.status).toBe(404)
    expect(got.json).toMatchObject({ error_code: 'message_not_found' })
  })
})
