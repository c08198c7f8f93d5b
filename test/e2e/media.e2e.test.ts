/**
 * Inbound media end to end: the real local server (wrangler dev, R2 on local disk), a real relay process in sim
 * mode, and the simulated network sending a photo, a voice note and a document. Each reaches a wait and the
 * message.received webhook with a signed media.url whose bytes and content type are what the sim sent, fetched
 * without a key; GET /v1/media answers the key; get_media over MCP (official SDK client) gives image and audio blocks; a relay SIGKILLed while it uploads a large file leaves no partial item
 * and the message arrives exactly once, with its whole media, through the next relay.
 */
import { createHash } from 'node:crypto'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { describe, expect, it } from 'vitest'
import { enc, eventually, issueRelayToken, openLocalD1, simPost, type Json } from './relay-harness'
import { relaySuite } from './relay-suite'

const suite = relaySuite()
const { api } = suite
const relay = (token: string) => suite.relay(token)
const linkedAccount = () => suite.linkedAlphaAccount('1557')
const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex')

function bytesOf(n: number, seed: number): Buffer {
  const b = Buffer.alloc(n)
  for (let i = 0; i < n; i++) b[i] = (i * 31 + seed) % 251
  return b
}

const ITEMS = [
  { label: 'a photo', content_type: 'image/jpeg', file_name: 'photo.jpg', voice_note: false, kind: 'image', data: bytesOf(300_000, 1) },
  { label: 'a voice note', content_type: 'audio/ogg; codecs=opus', file_name: null, voice_note: true, kind: 'voice_note', data: bytesOf(40_000, 2) },
  { label: 'a document', content_type: 'application/pdf', file_name: 'invoice.pdf', voice_note: false, kind: 'document', data: bytesOf(120_000, 3) },
]

describe('inbound media through the relay', () => {
  it('brings a photo, a voice note and a document to a wait and the webhook with signed links to the same bytes', async () => {
    const { token } = await issueRelayToken(suite.server)
    await relay(token).linked
    const { key, phone, hook } = await linkedAccount()
    for (const item of ITEMS) {
      const cursor = (await api(key, 'GET', '/messages/wait?timeout_s=0')).json.cursor
      const waiting = api(key, 'GET', `/messages/wait?timeout_s=30&cursor=${cursor}`)
      const media = { content_type: item.content_type, file_name: item.file_name, data_base64: item.data.toString('base64'), voice_note: item.voice_note }
      expect(
        (await simPost(suite.sim, `/alpha/${enc(phone)}/inbound`, { from: '+447700900222', text: item.kind === 'image' ? 'look' : '', name: 'Bo', media }))
          .status
      ).toBe(200)
      const [answer, received] = await Promise.all([waiting, hook.next()])
      const [m] = answer.json.messages
      expect(m.media, item.label).toMatchObject({
        content_type: item.content_type,
        kind: item.kind,
        size: item.data.length,
        file_name: item.file_name,
        too_large: false,
      })
      expect(m.media.url).toMatch(/\/media\/med_[0-9a-f]{24}\?expires=\d+&signature=[0-9a-f]{64}$/)
      // Fetched like an agent hands it to another service: no API key.
      const got = await fetch(m.media.url)
      expect(got.status).toBe(200)
      expect(got.headers.get('content-type')).toBe(item.content_type)
      expect(sha(new Uint8Array(await got.arrayBuffer()))).toBe(sha(item.data))
      // The webhook carries its own signed link to the same item.
      const payload = received.payload as Json
      expect(payload.message.media).toMatchObject({ id: m.media.id, content_type: item.content_type, kind: item.kind })
      const viaHook = await fetch(payload.message.media.url)
      expect(sha(new Uint8Array(await viaHook.arrayBuffer()))).toBe(sha(item.data))
      // With the key: the bytes, and a range of them.
      const direct = await fetch(`${suite.server.url}/v1/media/${m.media.id}`, { headers: { 'X-API-Key': key, Range: 'bytes=10-19' } })
      expect(direct.status).toBe(206)
      expect(Buffer.from(await direct.arrayBuffer())).toEqual(item.data.subarray(10, 20))
    }
    const other = await suite.server.newTenant()
    const listed = (await api(key, 'GET', '/messages?limit=3')).json.messages as Json[]
    expect((await fetch(`${suite.server.url}/v1/media/${listed[0]!.media.id}`, { headers: { 'X-API-Key': other.key } })).status).toBe(404)

    // An agent looks and listens over MCP, with the official SDK client.
    const [doc, voice, photo] = listed
    const transport = new StreamableHTTPClientTransport(new URL(`${suite.server.url}/mcp`), { requestInit: { headers: { 'X-API-Key': key } } })
    const client = new Client({ name: 'e2e-media-agent', version: '1.0.0' })
    await client.connect(transport)
    try {
      const image = (await client.callTool({ name: 'get_media', arguments: { mediaId: photo!.media.id } })) as CallToolResult
      expect(image.isError).toBeFalsy()
      expect(image.content[0]).toMatchObject({ type: 'text', text: expect.stringMatching(/^HTTP 200\n/) })
      expect(image.content[1]).toEqual({ type: 'image', mimeType: 'image/jpeg', data: ITEMS[0]!.data.toString('base64') })
      const audio = (await client.callTool({ name: 'get_media', arguments: { mediaId: voice!.media.id } })) as CallToolResult
      expect(audio.content[1]).toEqual({ type: 'audio', mimeType: 'audio/ogg', data: ITEMS[1]!.data.toString('base64') })
      const pdf = (await client.callTool({ name: 'get_media', arguments: { mediaId: doc!.media.id } })) as CallToolResult
      expect(pdf.content).toHaveLength(1)
      expect(JSON.parse((pdf.content[0] as { text: string }).text.replace(/^HTTP 200\n/, ''))).toMatchObject({
        content_type: 'application/pdf',
        size: ITEMS[2]!.data.length,
        inlined: false,
      })
      const foreign = (await client.callTool({ name: 'get_media', arguments: { mediaId: 'med_000000000000000000000000' } })) as CallToolResult
      expect(foreign.isError).toBe(true)
      expect(foreign.content[0]).toMatchObject({ type: 'text', text: expect.stringMatching(/^HTTP 404\n/) })
    } finally {
      await client.close()
    }
  })

  it('leaves no partial item when the relay is SIGKILLed during a large upload, then stores the message once with its media', async () => {
    const { token } = await issueRelayToken(suite.server)
    const first = relay(token)
    await first.linked
    const { key, phone } = await linkedAccount()
    const big = bytesOf(24 * 1024 * 1024, 7)
    const media = { content_type: 'video/mp4', file_name: 'clip.mp4', data_base64: big.toString('base64'), voice_note: false }
    expect((await simPost(suite.sim, `/alpha/${enc(phone)}/inbound`, { from: '+447700900333', text: 'watch this', media })).status).toBe(200)
    await eventually(() => first.output().includes('media upload started'), 20_000, 'the upload to start')
    await first.kill('SIGKILL')
    const db = openLocalD1(suite.server)
    try {
      // Whatever the relay got through before it died: never a message without its media, never a partial row.
      const rows = db.prepare('SELECT size, status FROM media WHERE account_id = ?').all(phone) as Array<{ size: number; status: string }>
      for (const r of rows) expect(r.size).toBe(big.length)
    } finally {
      db.close()
    }
    const second = relay(token)
    await second.linked
    const stored = await eventually(
      async () => {
        const list = (await api(key, 'GET', '/messages?direction=inbound')).json.messages
        return list.length > 0 ? list : undefined
      },
      90_000,
      'the message after the retry'
    ).catch((err: unknown) => {
      throw new Error(`${String(err)}\n--- second relay:\n${second.output().slice(-3000)}`)
    })
    expect(stored).toHaveLength(1)
    expect(stored[0]).toMatchObject({ text: 'watch this', media: { kind: 'video', size: big.length, too_large: false } })
    const got = await fetch(stored[0].media.url)
    expect(got.status).toBe(200)
    expect(sha(new Uint8Array(await got.arrayBuffer()))).toBe(sha(big))
    // Still once after the new relay settled (the upstream's backlog is acknowledged only after the edge stored it).
    await new Promise((r) => setTimeout(r, 1500))
    expect((await api(key, 'GET', '/messages?direction=inbound')).json.messages).toHaveLength(1)
  }, 180_000)
})
