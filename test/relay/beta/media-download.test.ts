/**
 * Inbound beta media: a photo, voice note or document on a private message becomes one attachment, downloaded part by
 * part through the client (upload.GetFile) as a stream the relay core spools and uploads to the gateway's media store.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { randomBytes } from 'node:crypto'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { Api } from 'telegram'
import { makeMediaUploader } from '../../../relay/link/media-upload'
import { type BetaHarness, FRIEND, loggedIn, PHONE, settle, useFakeClock } from './harness'

/** beta's part size for upload.GetFile (GramJS asks for 512 KiB parts). */
const PART = 512 * 1024

async function readAll(s: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = []
  for await (const c of s) chunks.push(Buffer.from(c as Buffer))
  return Buffer.concat(chunks)
}

describe('beta inbound media', () => {
  beforeEach(useFakeClock)
  afterEach(() => vi.useRealTimers())

  it('attaches a voice note of several parts, with its kind, type and size, and streams its bytes in order', async () => {
    const h = await loggedIn()
    const bytes = randomBytes(1_300_000)
    h.net.write(FRIEND, PHONE, '', { contentType: 'audio/ogg', fileName: null, bytes, voiceNote: true })
    await settle()
    const [m] = h.inbound
    expect(m).toMatchObject({ text: '', media: null, attachment: { kind: 'voice_note', contentType: 'audio/ogg', fileName: null, declaredSize: bytes.length } })
    const got = await readAll(await m!.attachment!.open())
    expect(got.equals(bytes)).toBe(true)
    // A retry downloads again, from the first part.
    expect((await readAll(await m!.attachment!.open())).length).toBe(bytes.length)
    expect(h.net.requestsOf(Api.upload.GetFile).map((r) => Number(r.offset.toString()))).toEqual([0, PART, 2 * PART, 0, PART, 2 * PART])
  })

  it('names a photo an image and a file a document with its name, keeping the caption as text', async () => {
    const h = await loggedIn()
    h.net.write(FRIEND, PHONE, 'the view', { contentType: 'image/jpeg', fileName: null, bytes: Buffer.from('jpeg') })
    h.net.write(FRIEND, PHONE, '', { contentType: 'application/pdf', fileName: 'invoice.pdf', bytes: Buffer.from('%PDF') })
    h.net.write(FRIEND, PHONE, 'plain')
    await settle()
    expect(h.inbound.map((m) => [m.text, m.attachment?.kind ?? null, m.attachment?.contentType ?? null, m.attachment?.fileName ?? null])).toEqual([
      ['the view', 'image', 'image/jpeg', null],
      ['', 'document', 'application/pdf', 'invoice.pdf'],
      ['plain', null, null, null],
    ])
    expect((await readAll(await h.inbound[1]!.attachment!.open())).toString()).toBe('%PDF')
  })
})

describe('beta media through the media store', () => {
  let server: Server | null = null
  afterEach(async () => {
    await new Promise<void>((r) => (server ? server.close(() => r()) : r()))
    server = null
  })

  it('uploads the downloaded item with the upload path alpha uses', async () => {
    const h = await loggedIn()
    const bytes = randomBytes(600_000)
    h.net.write(FRIEND, PHONE, 'song', { contentType: 'audio/mpeg', fileName: 'song.mp3', bytes })
    await settle()
    const puts: Array<{ url: string; kind: string | undefined; body: Buffer }> = []
    server = createServer(async (req, res) => {
      const chunks: Buffer[] = []
      for await (const c of req) chunks.push(c as Buffer)
      puts.push({ url: req.url ?? '', kind: req.headers['x-media-kind']?.toString(), body: Buffer.concat(chunks) })
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ media_id: 'med_1', url: 'https://gw.example/v1/media/med_1', status: 'stored', reason: null, size: bytes.length }))
    })
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r))
    const upload = makeMediaUploader({ gatewayUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, token: 'rly_t', maxBytes: 10_000_000 })
    const m = h.inbound[0]!
    const stored = await upload('s1', 1, m.upstreamId, m.attachment!)
    expect(stored).toMatchObject({ url: 'https://gw.example/v1/media/med_1', contentType: 'audio/mpeg', stored: { kind: 'audio', fileName: 'song.mp3' } })
    expect(puts).toHaveLength(1)
    expect(puts[0]!.url).toContain(`/relay/media/s1/${m.upstreamId}`)
    expect(puts[0]!.body.equals(bytes)).toBe(true)
  })
})

describe('beta inbound media under flood waits', () => {
  beforeEach(useFakeClock)
  afterEach(() => vi.useRealTimers())

  async function voiceNote(size: number) {
    const h = await loggedIn()
    const bytes = randomBytes(size)
    h.net.write(FRIEND, PHONE, '', { contentType: 'audio/ogg', fileName: null, bytes, voiceNote: true })
    await settle()
    return { h, bytes, attachment: h.inbound[0]!.attachment! }
  }
  const offsets = (h: BetaHarness) => h.net.requestsOf(Api.upload.GetFile).map((r) => Number(r.offset.toString()))

  it('sleeps out a short flood wait on a file part (FLOOD_PREMIUM_WAIT) and asks that part again, so the download goes on where it was', async () => {
    const { h, bytes, attachment } = await voiceNote(1_300_000)
    h.net.floodNext('upload.GetFile', 3, { after: 1, premium: true })
    const reading = readAll(await attachment.open())
    await settle()
    expect(offsets(h)).toEqual([0, PART])
    vi.advanceTimersByTime(3_000)
    expect((await reading).equals(bytes)).toBe(true)
    expect(offsets(h)).toEqual([0, PART, PART, 2 * PART])
  })

  it('fails the download on a long flood wait instead of sleeping through it (the relay core tries the item again later)', async () => {
    const { h, attachment } = await voiceNote(1_300_000)
    h.net.floodNext('upload.GetFile', 3_600, { after: 1 })
    await expect(readAll(await attachment.open())).rejects.toThrow(/3600 seconds/)
    expect(offsets(h)).toEqual([0, PART])
  })

  it('bounds the short waits one download sleeps through', async () => {
    const { h, attachment } = await voiceNote(600_000)
    for (let i = 0; i < 20; i++) h.net.floodNext('upload.GetFile', 50)
    const reading = readAll(await attachment.open()).catch((e: unknown) => e)
    for (let i = 0; i < 20; i++) {
      await settle()
      vi.advanceTimersByTime(50_000)
    }
    expect(String(await reading)).toMatch(/50 seconds/)
    expect(offsets(h).length).toBeLessThan(20)
  })
})
