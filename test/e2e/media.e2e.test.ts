/**
 * Inbound media end to end: the real local server (wrangler dev, R2 on local disk), a real relay process in sim
 * mode, and the simulated network sending a photo, a voice note and a document. Each reaches a wait and the
 * message.received webhook with a signed media.url whose bytes and content type are what the sim sent, fetched
 * without a key; GET /v1/media answers the key; get_media over MCP (official SDK client) gives image and audio blocks; a relay SIGKILLed while it uploads a large file leaves no partial item
 * and the message arrives exactly once, with its whole media, through the next relay. A stranger's HTML page and
 * SVG with script, opened from their links in headless Chromium, download instead of running on the gateway's
 * origin (with UPDATE_SCREENSHOTS=1 the evidence is written to docs/screenshots/media-html-download.png).
 */
import { createHash } from 'node:crypto'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Download } from 'playwright-core'
import { describe, expect, it } from 'vitest'
import { openPhoneBrowser } from './phone-browser'
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
      expect(m.media.url).toMatch(/\/media\/med_[0-9a-f]{24}\?tenant=ten_[A-Za-z0-9]+&expires=\d+&signature=[0-9a-f]{64}$/)
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

  it('downloads a stranger’s HTML and SVG instead of running their script, in Chromium, and still shows a photo inline', async () => {
    const { token } = await issueRelayToken(suite.server)
    await relay(token).linked
    const { key, phone } = await linkedAccount()
    const evil = [
      {
        content_type: 'text/html',
        file_name: 'invoice.html',
        body: "<html><head><title>invoice</title></head><body><script>document.title='XSS '+document.domain;fetch('/v1/openapi.json').then(r=>r.text()).then(t=>{document.title='XSS read '+t.length});alert(document.domain)</script></body></html>",
      },
      {
        content_type: 'image/svg+xml',
        file_name: 'logo.svg',
        body: '<svg xmlns="http://www.w3.org/2000/svg" onload="alert(document.domain)"><script>alert(document.domain)</script><rect width="10" height="10"/></svg>',
      },
    ]
    const photo = {
      content_type: 'image/png',
      file_name: 'dot.png',
      data: Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64'),
    }
    const urls: Record<string, string> = {}
    for (const item of [...evil.map((e) => ({ ...e, data: Buffer.from(e.body) })), photo]) {
      const cursor = (await api(key, 'GET', '/messages/wait?timeout_s=0')).json.cursor
      const waiting = api(key, 'GET', `/messages/wait?timeout_s=30&cursor=${cursor}`)
      const media = { content_type: item.content_type, file_name: item.file_name, data_base64: item.data.toString('base64'), voice_note: false }
      expect((await simPost(suite.sim, `/alpha/${enc(phone)}/inbound`, { from: '+447700900444', text: '', name: 'Stranger', media })).status).toBe(200)
      const [m] = (await waiting).json.messages
      expect(m.media.content_type).toBe(item.content_type)
      urls[item.content_type] = m.media.url
    }

    const device = await openPhoneBrowser('media')
    try {
      const page = await device.context.newPage()
      const dialogs: string[] = []
      page.on('dialog', (d) => {
        dialogs.push(d.message())
        void d.dismiss()
      })
      const seen: Array<{ type: string; disposition: string; nosniff: string; csp: string; file: string }> = []
      for (const { content_type: type } of evil) {
        const headers = (await fetch(urls[type]!, { method: 'HEAD' })).headers
        expect(headers.get('content-disposition')).toMatch(/^attachment; /)
        expect(headers.get('x-content-type-options')).toBe('nosniff')
        expect(headers.get('content-security-policy')).toBe("default-src 'none'; sandbox")
        // Opening the link only starts a download: the document is never rendered, its script never runs.
        const download: Promise<Download> = page.waitForEvent('download')
        await page.goto(urls[type]!).catch((err: unknown) => expect(String(err)).toMatch(/Download is starting|ERR_ABORTED/))
        const file = await download
        seen.push({
          type,
          disposition: headers.get('content-disposition')!,
          nosniff: headers.get('x-content-type-options')!,
          csp: headers.get('content-security-policy')!,
          file: file.suggestedFilename(),
        })
        await file.cancel()
      }
      await page.waitForTimeout(500)
      expect(dialogs).toEqual([])
      const titleAfter = await page.title()
      expect(titleAfter).not.toMatch(/XSS/)
      expect(seen.map((s) => s.file)).toEqual(['invoice.html', 'logo.svg'])
      // A raster image is still shown inline, under the same CSP.
      const shown = await page.goto(urls['image/png']!)
      expect(shown?.status()).toBe(200)
      expect(shown?.headers()['content-disposition']).toMatch(/^inline; /)

      // The evidence for docs/security.md: what the browser got and did, next to the photo it rendered inline.
      const esc = (v: string) => v.replace(/[&<>"]/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[ch]!)
      const rows = seen
        .map(
          (s) =>
            `<tr><td>${esc(s.type)}</td><td>${esc(s.disposition)}<br>nosniff · ${esc(s.csp)}</td><td>downloaded as <b>${esc(s.file)}</b>, not rendered</td></tr>`
        )
        .join('')
      const html = `<!doctype html><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><style>body{font:14px system-ui;margin:12px}table{border-collapse:collapse}td{border-top:1px solid #ccc;padding:6px 4px;vertical-align:top;word-break:break-word}img{width:64px;height:64px;image-rendering:pixelated;border:1px solid #ccc}</style>
<h3>A stranger's files, opened from their media links</h3><table>${rows}</table>
<p>Alerts fired: ${dialogs.length}. Page title after both: “${esc(titleAfter)}” (the script would have set “XSS …”).</p>
<p>image/png, shown inline: <img src="${esc(urls['image/png']!)}"></p>`
      // Written by the test and shown on the local server's host (Playwright answers it; the server never sees it).
      const evidence = `${suite.server.url}/__evidence`
      await page.route(evidence, (route) => route.fulfill({ contentType: 'text/html', body: html }))
      await page.goto(evidence)
      await page.waitForFunction(() => Array.from(document.images).every((i) => i.complete && i.naturalWidth > 0))
      const file = join(device.shotsDir, 'media-html-download.png')
      await page.screenshot({ path: file })
      expect(readFileSync(file).subarray(1, 4).toString()).toBe('PNG')
    } finally {
      await device.close()
    }
  }, 120_000)
})
