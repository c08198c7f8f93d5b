/**
 * The official MCP SDK client against the real local server (wrangler dev): it connects with the key in a header,
 * lists the tools, and drives a full receive-and-reply loop on the custom channel through tools alone.
 */
import { describe, expect, it } from 'vitest'
import { localSuite } from './local-suite'
import { callTool as tool, connectMcp } from './mcp-client'

const local = localSuite()
const connect = (headers: Record<string, string>, query = '') => connectMcp(local.server.url, headers, query)

describe('MCP with the official SDK client on the local server', () => {
  it('connects, lists the tools and runs a receive-and-reply loop', async () => {
    const { key } = await local.server.newTenant()
    const { client, transport } = await connect({ 'X-API-Key': key })
    try {
      expect(transport.sessionId).toBeUndefined()
      expect(client.getServerVersion()).toEqual({ name: 'messaging-gateway', title: 'Messaging Gateway', version: '1.0.0' })
      expect(client.getServerCapabilities()?.tools).toBeDefined()
      expect(client.getInstructions()).toContain('wait_for_messages')

      const { tools } = await client.listTools()
      expect(tools).toHaveLength(50) // the spec's tools, the project's, and the six conversation actions
      expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(['list_accounts', 'wait_for_messages', 'send_message', 'get_message']))

      const connected = await tool(client, 'set_custom_channel_webhook', { body: { webhook_url: `${local.receiver.url}/r/mcp-bridge?token=s3cret` } })
      expect(connected.status).toBe(200)
      const accounts = await tool<{ accounts: { id: string; channel: string; status: string }[] }>(client, 'list_accounts')
      expect(accounts.json.accounts).toEqual([expect.objectContaining({ id: 'custom', channel: 'custom', status: 'connected' })])

      const start = await tool<{ cursor: string }>(client, 'wait_for_messages', { timeout_s: 0 })
      const waiting = tool<{ messages: { text: string; contact: { id: string } }[]; cursor: string }>(client, 'wait_for_messages', {
        cursor: start.json.cursor,
        timeout_s: 30,
      })
      // The person writes on the user's side; the bridge pushes it in over REST.
      const push = await fetch(`${local.server.url}/v1/channels/custom/inbound`, {
        method: 'POST',
        headers: { 'X-API-Key': key, 'Content-Type': 'application/json' },
        body: JSON.stringify({ customData: { body: 'Do you deliver on Sundays?', fromId: 'person-42', firstName: 'Grace' } }),
      })
      expect(push.status).toBe(200)
      const got = await waiting
      expect(got.status).toBe(200)
      expect(got.json.messages.map((m) => m.text)).toEqual(['Do you deliver on Sundays?'])

      const reply = await tool<{ message_id: string; status: string }>(client, 'send_message', {
        body: { to: { contact_id: got.json.messages[0]!.contact.id }, text: 'Yes, from 10 to 4.' },
      })
      expect(reply.status).toBe(202)
      expect(reply.json.status).toBe('queued')

      let status = 'queued'
      for (let i = 0; i < 200 && status === 'queued'; i++) {
        status = (await tool<{ status: string }>(client, 'get_message', { id: reply.json.message_id })).json.status
        if (status === 'queued') await new Promise((r) => setTimeout(r, 50))
      }
      expect(status).toBe('sent')
      expect(local.receiver.log('mcp-bridge').map((r) => r.json)).toEqual([
        expect.objectContaining({ messageId: reply.json.message_id, toId: 'person-42', body: 'Yes, from 10 to 4.' }),
      ])
    } finally {
      await client.close()
    }
  })

  it('takes the key as Authorization: Bearer too', async () => {
    const { key } = await local.server.newTenant()
    const { client } = await connect({ Authorization: `Bearer ${key}` })
    try {
      expect((await tool(client, 'get_usage')).status).toBe(200)
    } finally {
      await client.close()
    }
  })

  it('cannot connect without a key, or with the key in the URL', async () => {
    const { key } = await local.server.newTenant()
    // The SDK puts the HTTP status in `code` and the server's sentence in the message the user sees.
    await expect(connect({})).rejects.toMatchObject({ code: 401, message: expect.stringContaining('An API key is required') })
    await expect(connect({ 'X-API-Key': key }, `?apiKey=${key}`)).rejects.toMatchObject({
      code: 400,
      message: expect.stringContaining('not take an API key in the URL'),
    })
  })
})
