/**
 * Black box on the real local server (wrangler dev): a client whose answer to a send is lost on the way back (an
 * HTTP proxy reads the gateway's answer and resets the client's connection) retries with the same Idempotency-Key,
 * and the gateway creates one message and makes one upstream send (the custom channel's webhook, a local receiver),
 * over REST and over MCP.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startAnswerDroppingProxy, type AnswerDroppingProxy } from '../fixtures/answer-dropping-proxy'
import { localSuite } from './local-suite'
import { connectMcp } from './mcp-client'

const local = localSuite()
let proxy: AnswerDroppingProxy

beforeAll(async () => {
  proxy = await startAnswerDroppingProxy(local.server.url)
})
afterAll(async () => {
  await proxy?.close()
})

/** A tenant whose custom channel posts to its own receiver channel, with one person who wrote in. */
async function bridgedTenant(label: string) {
  const { key } = await local.server.newTenant()
  const channel = `${label}-${Date.now().toString(36)}`
  expect((await local.api(key, 'PUT', '/channels/custom', { webhook_url: `${local.receiver.url}/r/${channel}` })).status).toBe(200)
  expect((await local.api(key, 'POST', '/channels/custom/inbound', { customData: { body: 'Are you open?', fromId: 'ada' } })).status).toBe(200)
  return { key, channel }
}

/** The tool text of a JSON-RPC answer to tools/call, sent as JSON or as one server-sent event. */
function toolText(answer: string): string {
  const json = answer.trimStart().startsWith('{') ? answer : (/^data: (.*)$/m.exec(answer)?.[1] ?? '')
  const parsed = JSON.parse(json) as { result?: { content?: { text?: string }[] } }
  return parsed.result?.content?.[0]?.text ?? ''
}

async function outboundTexts(key: string): Promise<string[]> {
  const list = await local.api<{ messages: { text: string }[] }>(key, 'GET', '/messages?direction=outbound')
  return list.json.messages.map((m) => m.text)
}

async function untilSent(key: string, id: string): Promise<void> {
  const deadline = Date.now() + 15_000
  for (;;) {
    const { json } = await local.api<{ status: string }>(key, 'GET', `/messages/${id}`)
    if (json.status !== 'queued' || Date.now() > deadline) return void expect(json.status).toBe('sent')
    await new Promise((r) => setTimeout(r, 100))
  }
}

describe('a send whose answer was lost, retried with the same Idempotency-Key', () => {
  it('REST: creates one message and one upstream send, and the retry gets the lost answer', async () => {
    const { key, channel } = await bridgedTenant('idem-rest')
    const body = JSON.stringify({ to: { external_id: 'ada' }, text: 'Yes, until six.' })
    const send = () =>
      fetch(`${proxy.url}/v1/messages`, {
        method: 'POST',
        headers: { 'X-API-Key': key, 'Content-Type': 'application/json', 'Idempotency-Key': 'reply-ada-1' },
        body,
      })
    const lost = proxy.dropNextAnswer((r) => r.method === 'POST' && r.path === '/v1/messages' && r.headers['x-api-key'] === key)
    await expect(send()).rejects.toThrow()
    const first = await lost
    expect(first.status).toBe(202)

    const retry = await send()
    expect(retry.status).toBe(202)
    expect(retry.headers.get('idempotent-replayed')).toBe('true')
    const text = await retry.text()
    expect(text).toBe(first.body)
    await untilSent(key, (JSON.parse(text) as { message_id: string }).message_id)

    expect(await outboundTexts(key)).toEqual(['Yes, until six.'])
    expect(local.receiver.log(channel).filter((r) => (r.json as { body?: string }).body === 'Yes, until six.')).toHaveLength(1)

    const other = await fetch(`${proxy.url}/v1/messages`, {
      method: 'POST',
      headers: { 'X-API-Key': key, 'Content-Type': 'application/json', 'Idempotency-Key': 'reply-ada-1' },
      body: JSON.stringify({ to: { external_id: 'ada' }, text: 'Something else' }),
    })
    expect(other.status).toBe(422)
    expect(((await other.json()) as { error_code: string }).error_code).toBe('idempotency_key_reused')
    expect(await outboundTexts(key)).toEqual(['Yes, until six.'])
  })

  it('MCP: send_message retried with the same idempotency_key creates one message and one upstream send', async () => {
    const { key, channel } = await bridgedTenant('idem-mcp')
    const { client } = await connectMcp(proxy.url, { 'X-API-Key': key })
    const args = { body: { to: { external_id: 'ada' }, text: 'Booked for two at 7.' }, idempotency_key: 'agent-reply-ada-1' }
    const lost = proxy.dropNextAnswer((r) => r.method === 'POST' && r.path === '/mcp' && r.headers['x-api-key'] === key && r.body.includes('"send_message"'))
    await expect(client.callTool({ name: 'send_message', arguments: args })).rejects.toThrow()
    const first = await lost
    expect(first.status).toBe(200)
    const firstText = toolText(first.body)
    expect(firstText).toMatch(/^HTTP 202\n/)

    const retry = (await client.callTool({ name: 'send_message', arguments: args })) as { content: { text?: string }[] }
    expect(retry.content[0]?.text).toBe(firstText)
    const messageId = (JSON.parse(firstText.slice('HTTP 202\n'.length)) as { message_id: string }).message_id
    await untilSent(key, messageId)
    expect(await outboundTexts(key)).toEqual(['Booked for two at 7.'])
    expect(local.receiver.log(channel).filter((r) => (r.json as { body?: string }).body === 'Booked for two at 7.')).toHaveLength(1)
    await client.close()
  })
})
