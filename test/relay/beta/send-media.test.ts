/**
 * Outbound beta media: the file uploaded in parts (upload.SaveFilePart) and sent (messages.SendMedia) by the driver,
 * so a short flood wait on one part (beta's FLOOD_PREMIUM_WAIT throttles uploads) is slept and that part sent again,
 * a long one pauses the account visibly and the upload goes on from that part, and a file from a URL without an
 * extension is named from Content-Disposition or its content type.
 */
import { createServer, request as httpRequest, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { randomBytes } from 'node:crypto'
import { Api } from 'telegram'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { makeMediaFetcher, type FetchMedia } from '../../../relay/alpha/media-fetch'
import type { OutboundMessage } from '../../../relay/connector'
import { type BetaHarness, FRIEND, loggedIn, PHONE, settle, useFakeClock } from './harness'

const to = { phone: FRIEND, peerId: null }
const withMedia = (id: string, url = 'https://media.example.com/clip.mp4', text = 'a clip'): OutboundMessage => ({ messageId: id, to, text, mediaUrl: url })
const serving = (bytes: Buffer, contentType: string, fileName: string | null): FetchMedia => vi.fn<FetchMedia>(async () => ({ bytes, contentType, fileName }))
const partNumbers = (h: BetaHarness) => h.net.requestsOf(Api.upload.SaveFilePart).map((r) => r.filePart)
/** What the person received: the file as beta stored it. */
const received = (h: BetaHarness) => h.net.account(PHONE).outbox.map((e) => e.file)

describe('beta outbound media under flood waits', () => {
  beforeEach(useFakeClock)
  afterEach(() => vi.useRealTimers())

  it('sleeps out a short flood wait on a file part and sends that part again, without restarting the upload or pausing sends', async () => {
    const bytes = randomBytes(1_300_000)
    const h = await loggedIn({ fetchMedia: serving(bytes, 'video/mp4', 'clip.mp4') })
    h.net.floodNext('upload.SaveFilePart', 5, { after: 2, premium: true })
    const sending = h.connector.send(withMedia('m1'))
    await settle()
    vi.advanceTimersByTime(5_000)
    const { upstreamId } = await sending
    const parts = partNumbers(h)
    // Every part once, in order, and the one beta asked to wait for once more: nothing restarted from zero.
    expect(parts.slice(0, 4)).toEqual([0, 1, 2, 2])
    expect(parts.slice(3)).toEqual([...new Set(parts.slice(3))].sort((a, b) => a - b))
    expect(received(h)).toEqual([expect.objectContaining({ fileName: 'clip.mp4', contentType: 'video/mp4' })])
    expect(received(h)[0]!.bytes.equals(bytes)).toBe(true)
    expect(h.net.sent.at(-1)!.id).toBe(Number(upstreamId))
    expect(h.states.some((s) => s.state === 'slowed')).toBe(false)
  })

  it('reports a long flood wait on a file part as slowed, then goes on from that part when the wait ends', async () => {
    const bytes = randomBytes(1_300_000)
    const h = await loggedIn({ fetchMedia: serving(bytes, 'video/mp4', 'clip.mp4') })
    h.net.floodNext('upload.SaveFilePart', 600, { after: 2 })
    const started = Date.now()
    const sending = h.connector.send(withMedia('m1'))
    await settle()
    expect(h.last()).toMatchObject({ state: 'slowed', problem: 'flood_wait', until: started + 600_000 })
    vi.advanceTimersByTime(600_000)
    await sending
    const parts = partNumbers(h)
    expect(parts.slice(0, 4)).toEqual([0, 1, 2, 2])
    expect(parts.filter((p) => p === 0)).toHaveLength(1)
    expect(received(h)[0]!.bytes.equals(bytes)).toBe(true)
    expect(h.last()).toMatchObject({ state: 'connected' })
  })

  it('reports a flood wait on the send itself as slowed (no sleeping inside the call) and does not upload the file again', async () => {
    const bytes = randomBytes(300_000)
    const h = await loggedIn({ fetchMedia: serving(bytes, 'application/pdf', 'report.pdf') })
    h.net.floodNext('messages.SendMedia', 5)
    const sending = h.connector.send(withMedia('m1', 'https://media.example.com/report.pdf', 'the report'))
    await settle()
    expect(h.last()).toMatchObject({ state: 'slowed', problem: 'flood_wait' })
    const uploaded = partNumbers(h).length
    vi.advanceTimersByTime(5_000)
    await sending
    expect(partNumbers(h)).toHaveLength(uploaded)
    expect(h.net.calls.filter((c) => c === 'messages.SendMedia')).toHaveLength(2)
    expect(received(h)).toEqual([expect.objectContaining({ fileName: 'report.pdf', contentType: 'application/pdf' })])
  })
})

describe('beta outbound media whose parts beta lost', () => {
  beforeEach(useFakeClock)
  afterEach(() => vi.useRealTimers())

  it('uploads the file once more when beta answers FILE_PARTS_INVALID to the send, then fails it if the parts are lost again', async () => {
    const bytes = randomBytes(300_000)
    const h = await loggedIn({ fetchMedia: serving(bytes, 'application/pdf', 'report.pdf') })
    h.net.rpcNext('messages.SendMedia', 'FILE_PARTS_INVALID')
    await h.connector.send(withMedia('m1', 'https://media.example.com/report.pdf', 'the report'))
    const ids = h.net.requestsOf(Api.upload.SaveFilePart).map((r) => r.fileId.toString())
    expect(ids).toHaveLength(6)
    expect(new Set(ids).size).toBe(2)
    expect(received(h)[0]!.bytes.equals(bytes)).toBe(true)
    h.net.rpcNext('messages.SendMedia', 'FILE_PART_1_MISSING')
    h.net.rpcNext('messages.SendMedia', 'FILE_PART_1_MISSING')
    await expect(h.connector.send(withMedia('m2', 'https://media.example.com/report.pdf', 'again'))).rejects.toThrow(/FILE_PART_1_MISSING/)
  })
})

describe('beta outbound media file names', () => {
  beforeEach(useFakeClock)
  afterEach(() => vi.useRealTimers())

  it('names a JPEG from a URL without an extension by its content type, so it goes as a photo', async () => {
    const h = await loggedIn({ fetchMedia: serving(Buffer.from('jpeg'), 'image/jpeg', null) })
    await h.connector.send(withMedia('m1', 'https://cdn.example.com/', 'a photo'))
    expect(h.net.requestsOf(Api.messages.SendMedia)[0]!.media).toBeInstanceOf(Api.InputMediaUploadedPhoto)
    expect(received(h)).toEqual([expect.objectContaining({ fileName: 'attachment.jpg', contentType: 'image/jpeg' })])
  })

  it("adds the content type's extension to a name without one, and keeps a name that has one", async () => {
    const h = await loggedIn({ fetchMedia: serving(Buffer.from('%PDF'), 'application/pdf; charset=binary', 'download') })
    await h.connector.send(withMedia('m1', 'https://files.example.com/download', 'the report'))
    expect(received(h).at(-1)).toMatchObject({ fileName: 'download.pdf', contentType: 'application/pdf' })
  })

  it('falls back to a generic name for bytes of an unknown type', async () => {
    const h = await loggedIn({ fetchMedia: serving(Buffer.from([1, 2, 3]), 'application/octet-stream', null) })
    await h.connector.send(withMedia('m1', 'https://files.example.com/', 'bytes'))
    expect(received(h).at(-1)).toMatchObject({ fileName: 'attachment.bin', contentType: 'application/octet-stream' })
  })
})

describe('beta outbound media named by the server', () => {
  let server: Server | null = null
  afterEach(async () => {
    await new Promise<void>((r) => (server ? server.close(() => r()) : r()))
    server = null
  })

  it('takes the file name from Content-Disposition (the fetcher reads it), whatever the URL path says', async () => {
    server = createServer((_req, res) => {
      res.writeHead(200, {
        'content-type': 'application/pdf',
        'content-disposition': `attachment; filename="Q3 report.pdf"; filename*=UTF-8''Q3%20r%C3%A9sum%C3%A9.pdf`,
      })
      res.end('%PDF-1.7')
    })
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r))
    const port = (server.address() as AddressInfo).port
    const fetchMedia = makeMediaFetcher({ allowLoopback: true, request: httpRequest })
    const h = await loggedIn({ fetchMedia })
    await h.connector.send(withMedia('m1', `http://127.0.0.1:${port}/dl?id=3`, 'the report'))
    expect(received(h).at(-1)).toMatchObject({ fileName: 'Q3 résumé.pdf', contentType: 'application/pdf' })
    expect(received(h).at(-1)!.bytes.toString()).toBe('%PDF-1.7')
  })
})
