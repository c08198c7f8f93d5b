// Inbound alpha media downloaded and decrypted by Baileys' own downloadMediaMessage from a local media server: an
// expired URL (410 or 404, a backlog or a forwarded file) is uploaded again by the sender's phone and then stored.
import { readFile, unlink } from 'node:fs/promises'
import { encryptedStream } from '@whiskeysockets/baileys'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { listen } from '../../fixtures/fake-http'
import { boom } from '../../fixtures/alpha-socket'
import { harness, incoming, linkedStore, type Harness } from './harness'

const PHOTO = Buffer.from('a photo sent a week ago, long gone from the media servers '.repeat(200))

let media: Awaited<ReturnType<typeof listen>>
/** Paths asked of the media server, in order. */
let requests: string[]
/** What each path answers: the encrypted file, or a status. */
let files: Map<string, Buffer | number>

beforeEach(async () => {
  requests = []
  files = new Map()
  media = await listen((_req, res, url) => {
    requests.push(url.pathname)
    const file = files.get(url.pathname) ?? 404
    if (typeof file === 'number') {
      res.writeHead(file)
      return void res.end()
    }
    res.writeHead(200, { 'Content-Type': 'application/octet-stream', 'Content-Length': String(file.length) })
    res.end(file)
  })
})
afterEach(async () => {
  await media.close()
})

/** The photo encrypted as alpha stores media (Baileys' own encryptedStream), and the message that points at it. */
async function photoMessage(path: string) {
  const enc = await encryptedStream(PHOTO, 'image')
  const bytes = await readFile(enc.encFilePath)
  await unlink(enc.encFilePath)
  const message = incoming({
    message: {
      imageMessage: {
        url: `${media.url}${path}`,
        mimetype: 'image/jpeg',
        mediaKey: enc.mediaKey,
        fileSha256: enc.fileSha256,
        fileEncSha256: enc.fileEncSha256,
        fileLength: PHOTO.length,
      },
    },
  })
  return { message, bytes }
}

async function opened(h: Harness): Promise<Buffer> {
  const attachment = h.inbound.at(-1)?.attachment
  if (!attachment) throw new Error('no attachment handed over')
  const chunks: Buffer[] = []
  for await (const chunk of await attachment.open()) chunks.push(Buffer.from(chunk))
  return Buffer.concat(chunks)
}

async function connected(): Promise<Harness> {
  const h = await harness({ store: await linkedStore() })
  await h.startOpen()
  return h
}

describe('alpha inbound media from an expired URL', () => {
  it.each([410, 404])('an expired media URL (%i) is re-uploaded and stored', async (status) => {
    const h = await connected()
    const { message, bytes } = await photoMessage('/expired')
    files.set('/expired', status)
    files.set('/reuploaded', bytes)
    h.sockets.latest.onReupload = () => `${media.url}/reuploaded`
    await h.sockets.latest.receive([message], 'append')
    await new Promise((r) => setImmediate(r))
    expect((await opened(h)).equals(PHOTO)).toBe(true)
    expect(h.sockets.latest.reuploads).toEqual([message.key.id])
    expect(requests).toEqual(['/expired', '/reuploaded'])
  })

  it('downloads a live URL once, with no re-upload request', async () => {
    const h = await connected()
    const { message, bytes } = await photoMessage('/live')
    files.set('/live', bytes)
    await h.sockets.latest.receive([message], 'notify')
    await new Promise((r) => setImmediate(r))
    expect((await opened(h)).equals(PHOTO)).toBe(true)
    expect(h.sockets.latest.reuploads).toEqual([])
  })

  it('asks for no re-upload when the media server fails otherwise (500), and fails the download', async () => {
    const h = await connected()
    const { message } = await photoMessage('/broken')
    files.set('/broken', 500)
    await h.sockets.latest.receive([message], 'notify')
    await new Promise((r) => setImmediate(r))
    await expect(opened(h)).rejects.toMatchObject({ output: { statusCode: 500 } })
    expect(h.sockets.latest.reuploads).toEqual([])
  })

  it('fails the download when the phone cannot upload the file again', async () => {
    const h = await connected()
    const { message } = await photoMessage('/expired')
    files.set('/expired', 410)
    h.sockets.latest.onReupload = () => boom(404, 'Media re-upload failed by device (NOT_FOUND)')
    await h.sockets.latest.receive([message], 'notify')
    await new Promise((r) => setImmediate(r))
    await expect(opened(h)).rejects.toThrow('re-upload failed')
    expect(requests).toEqual(['/expired'])
  })
})

describe('alpha media messages while their file is stored', () => {
  it('keeps a media message with the session until the edge stored it, so a relay killed mid-upload loses nothing', async () => {
    const h = await connected()
    const { message, bytes } = await photoMessage('/live')
    files.set('/live', bytes)
    await h.sockets.latest.receive([message], 'notify')
    await new Promise((r) => setImmediate(r))
    const name = `relay/media/${message.key.id}`
    // Durable before the download starts; the process then dies without reporting the message (no commit).
    expect(h.inbound).toHaveLength(1)
    expect(h.store.atRest.has(name)).toBe(true)

    const next = await harness({ store: h.store })
    await next.startOpen()
    expect(next.inbound.map((m) => [m.upstreamId, m.text, m.from.id])).toEqual([[message.key.id, '', '99000000000777@lid']])
    expect((await opened(next)).equals(PHOTO)).toBe(true)
    next.inbound[0]!.onCommitted?.()
    await new Promise((r) => setImmediate(r))
    expect(next.store.atRest.has(name)).toBe(false)
    // Stored: a third run has nothing to hand over again.
    const third = await harness({ store: next.store })
    await third.startOpen()
    expect(third.inbound).toEqual([])
  })
})
