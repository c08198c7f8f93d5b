/**
 * Agent safety against the real local server (wrangler dev): the official MCP SDK client with keys of each scope
 * (tools/list fits the key, a hidden tool answers 403, a reply-only key answers the person who wrote), and the
 * owner's approval page in headless Chromium on a phone-sized screen (approve sends, reject does not). With
 * UPDATE_SCREENSHOTS=1 the screenshots are written to docs/screenshots/. Chromium comes from scripts/chromium.mjs (phone-browser.ts).
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { localSuite } from './local-suite'
import { openPhoneBrowser, type PhoneBrowser } from './phone-browser'

const local = localSuite()
let device: PhoneBrowser

beforeAll(async () => {
  device = await openPhoneBrowser('approval')
})
afterAll(async () => {
  await device?.close()
})

async function mcp(key: string): Promise<Client> {
  const client = new Client({ name: 'scoped-agent', version: '1.0.0' })
  await client.connect(new StreamableHTTPClientTransport(new URL(`${local.server.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${key}` } } }))
  return client
}

async function tool(client: Client, name: string, args: Record<string, unknown> = {}) {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult
  const first = result.content[0]
  if (first?.type !== 'text') throw new Error(`${name}: no text content`)
  const match = /^HTTP (\d{3})\n([\s\S]*)$/.exec(first.text)
  return { status: Number(match![1]), json: JSON.parse(match![2]!) as Record<string, unknown>, isError: result.isError === true }
}

async function mint(key: string, fields: Record<string, unknown>): Promise<string> {
  const res = await local.api<{ key: string }>(key, 'POST', '/keys', fields)
  expect(res.status).toBe(201)
  return res.json.key
}

/** A tenant with its custom channel bridged to the receiver. */
async function bridged(name: string) {
  const { key } = await local.server.newTenant()
  expect((await local.api(key, 'PUT', '/channels/custom', { webhook_url: `${local.receiver.url}/r/${name}` })).status).toBe(200)
  return key
}

async function until<T>(check: () => T | undefined, what: string): Promise<T> {
  for (let i = 0; i < 200; i++) {
    const v = check()
    if (v !== undefined) return v
    await new Promise((r) => setTimeout(r, 50))
  }
  throw new Error(`timed out waiting for ${what}`)
}

describe('MCP with the official SDK client and scoped keys', () => {
  it('lists only what each key may call and answers a hidden tool with the REST 403', async () => {
    const owner = await bridged('mcp-scopes')
    const read = await mcp(await mint(owner, { scope: 'read', label: 'reader' }))
    const reply = await mcp(await mint(owner, { scope: 'reply', label: 'replier' }))
    const full = await mcp(owner)
    try {
      const names = async (c: Client) => (await c.listTools()).tools.map((t) => t.name)
      const [r, p, f] = [await names(read), await names(reply), await names(full)]
      expect(f).toHaveLength(50) // the spec's tools, the project's, and the six conversation actions
      expect(r).not.toContain('send_message')
      expect(r.filter((n) => n.startsWith('connect_') || n.startsWith('disconnect_'))).toEqual([])
      expect(r).toEqual(expect.arrayContaining(['list_accounts', 'wait_for_messages', 'get_message', 'list_messages', 'get_usage', 'list_audit']))
      expect(p).toContain('send_message')
      expect(p.filter((n) => n.startsWith('connect_') || n.includes('webhook_signing'))).toEqual([])
      const send = (await reply.listTools()).tools.find((t) => t.name === 'send_message')
      expect(send?.description).toContain('only to a person who wrote to that account in the last 24 h')

      const hidden = await tool(read, 'send_message', { body: { to: { external_id: 'x' }, text: 'hi' } })
      expect(hidden).toMatchObject({ status: 403, isError: true, json: { error_code: 'key_scope' } })
      const rest = await fetch(`${local.server.url}/v1/messages`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${await mint(owner, { scope: 'read' })}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ to: { external_id: 'x' }, text: 'hi' }),
      })
      expect({ status: rest.status, json: await rest.json() }).toEqual({ status: hidden.status, json: hidden.json })
      expect(await tool(reply, 'connect_alpha', { body: { phone_number: '+15550001111' } })).toMatchObject({ status: 403, isError: true })
    } finally {
      await Promise.all([read.close(), reply.close(), full.close()])
    }
  })

  it('lets a reply-only key answer the person who wrote, and nobody else', async () => {
    const owner = await bridged('mcp-reply')
    await local.api(owner, 'POST', '/channels/custom/inbound', { customData: { body: 'Are you open today?', fromId: 'person-7' } })
    const agent = await mcp(await mint(owner, { scope: 'reply', label: 'support bot' }))
    try {
      const inbox = await tool(agent, 'list_messages', { direction: 'inbound' })
      const contactId = (inbox.json.messages as { contact: { id: string } }[])[0]!.contact.id
      expect((await tool(agent, 'send_message', { body: { to: { contact_id: contactId }, text: 'Yes, until six.' } })).status).toBe(202)
      expect(await tool(agent, 'send_message', { body: { to: { external_id: 'someone-else' }, text: 'Hi!' } })).toMatchObject({
        status: 403,
        json: { error_code: 'key_scope' },
      })
      const audit = await tool(agent, 'list_audit', {})
      expect((audit.json.entries as { action: string; outcome: string }[]).slice(0, 2).map((e) => [e.action, e.outcome])).toEqual([
        ['send_message', 'refused'],
        ['send_message', 'accepted'],
      ])
    } finally {
      await agent.close()
    }
  })
})

async function shot(page: Page, name: string): Promise<void> {
  const file = join(device.shotsDir, name)
  await page.screenshot({ path: file, fullPage: true })
  expect(readFileSync(file).subarray(1, 4).toString()).toBe('PNG')
}

type HeldEvent = { event: string; message: { id: string }; approval: { page_url: string; approve_url: string; reject_url: string } }

describe('the approval page in Chromium', () => {
  it('shows the held message from the signed webhook link, sends it on approve, and drops the other on reject', async () => {
    const owner = await bridged('approval-bridge')
    expect(
      (await local.api(owner, 'POST', '/webhooks', { url: `${local.receiver.url}/r/approval-hooks`, subscribed_to: ['message.approval_required'] })).status
    ).toBe(201)
    const agent = await mint(owner, { approval: true, label: 'outreach agent' })
    const held = async (to: string, text: string) => {
      const res = await local.api<{ message_id: string; status: string }>(agent, 'POST', '/messages', { to: { external_id: to }, text })
      expect(res.json.status).toBe('awaiting_approval')
      return res.json.message_id
    }
    const first = await held('new-customer', 'Hi Dana, your order #1042 is ready for pickup at the Main St. store.')
    const second = await held('cold-lead', 'Special offer just for you!')
    const events = await until(() => {
      const log = local.receiver.log('approval-hooks')
      return log.length >= 2 ? log.map((d) => d.json as HeldEvent) : undefined
    }, 'two approval_required events')
    const eventOf = (id: string) => events.find((e) => e.message.id === id)!

    const page = await device.context.newPage()
    await page.goto(eventOf(first).approval.approve_url)
    expect(await page.textContent('#text')).toContain('order #1042')
    await shot(page, 'approval-page.png')
    expect((await local.api<{ status: string }>(owner, 'GET', `/messages/${first}`)).json.status).toBe('awaiting_approval')
    await page.getByRole('button', { name: 'Approve and send' }).click()
    await page.getByRole('heading', { name: 'Approved' }).waitFor({ timeout: 15_000 })
    await shot(page, 'approval-approved.png')
    const delivered = await until(
      () => local.receiver.log('approval-bridge').find((d) => (d.json as { messageId?: string })?.messageId === first),
      'the approved message at the bridge'
    )
    expect(delivered.json).toMatchObject({ body: 'Hi Dana, your order #1042 is ready for pickup at the Main St. store.', toId: 'new-customer' })

    await page.goto(eventOf(second).approval.reject_url)
    await page.getByRole('button', { name: 'Reject' }).click()
    await page.getByRole('heading', { name: 'Rejected' }).waitFor({ timeout: 15_000 })
    const rejected = await local.api<{ status: string; error: { message: string } }>(owner, 'GET', `/messages/${second}`)
    expect(rejected.json).toMatchObject({ status: 'failed', error: { message: expect.stringContaining('approval_rejected') } })
    expect(local.receiver.log('approval-bridge').some((d) => (d.json as { messageId?: string })?.messageId === second)).toBe(false)

    // A spent link says so.
    await page.goto(eventOf(first).approval.page_url)
    expect(await page.textContent('h1')).toBe('Already decided')
    await page.close()
  })
})
