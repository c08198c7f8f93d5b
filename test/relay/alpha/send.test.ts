// Sending on alpha through the driver: recipients, one media item as a Buffer, stable upstream ids, failures.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { upstreamIdFor } from '../../../relay/alpha/convert'
import type { FetchMedia } from '../../../relay/alpha/media-fetch'
import { SEND_TIMEOUT_MS } from '../../../relay/alpha/send'
import { SendError } from '../../../relay/alpha/send-error'
import type { OutboundMessage } from '../../../relay/connector'
import { boom } from '../../fixtures/alpha-socket'
import { harness, linkedStore, settle, useFakeClock, type Harness } from './harness'

beforeEach(useFakeClock)
afterEach(() => {
  vi.useRealTimers()
})

async function connected(fetchMedia?: FetchMedia): Promise<Harness> {
  const h = await harness({ store: await linkedStore(), fetchMedia })
  await h.startOpen()
  return h
}

function message(over: Partial<OutboundMessage> = {}): OutboundMessage {
  return { messageId: 'msg_01', to: { phone: '+15550000777', peerId: null }, text: 'Yes, until 6pm.', mediaUrl: null, ...over }
}

async function sendError(p: Promise<unknown>): Promise<SendError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e
  )
  if (!(err instanceof SendError)) throw new Error(`expected a SendError, got ${String(err)}`)
  return err
}

const media = (contentType: string | null, fileName: string | null = null): FetchMedia =>
  vi.fn<FetchMedia>(async () => ({ bytes: Buffer.from('bytes'), contentType, fileName }))

describe('alpha send', () => {
  it('sends text to a phone number under an upstream id derived from the gateway message id', async () => {
    const h = await connected()
    const first = await h.connector.send(message())
    expect(first).toEqual({ upstreamId: upstreamIdFor('msg_01') })
    expect(first.upstreamId).toMatch(/^3EB0[0-9A-F]{18}$/)
    expect(h.sockets.latest.sent).toEqual([{ jid: '15550000777@s.whatsapp.net', content: { text: 'Yes, until 6pm.' }, messageId: first.upstreamId }])
    const retry = await h.connector.send(message())
    expect(retry).toEqual(first)
    expect((await h.connector.send(message({ messageId: 'msg_02' }))).upstreamId).not.toBe(first.upstreamId)
  })

  it('sends to the peer id (LID) when there is one, never to a group', async () => {
    const h = await connected()
    await h.connector.send(message({ to: { phone: '+15550000777', peerId: '99000000000777@lid' } }))
    expect(h.sockets.latest.sent[0]!.jid).toBe('99000000000777@lid')
    await h.connector.send(message({ to: { phone: '+15550000777', peerId: '120363025555555555@g.us' } }))
    expect(h.sockets.latest.sent[1]!.jid).toBe('15550000777@s.whatsapp.net')
    const err = await sendError(h.connector.send(message({ to: { phone: null, peerId: '120363025555555555@g.us' } })))
    expect(err.code).toBe('invalid_recipient')
    expect((await sendError(h.connector.send(message({ to: { phone: '5550000777', peerId: null } })))).code).toBe('invalid_recipient')
  })

  it('refuses to send while the session is not connected', async () => {
    const h = await harness({ store: await linkedStore() })
    expect((await sendError(h.connector.send(message()))).code).toBe('not_connected')
    await h.startOpen()
    h.sockets.latest.close(428)
    await settle()
    const err = await sendError(h.connector.send(message()))
    expect(err).toMatchObject({ code: 'not_connected', retryable: true })
  })

  it('refuses a message with neither text nor media', async () => {
    const h = await connected()
    expect((await sendError(h.connector.send(message({ text: '' })))).code).toBe('empty_message')
    expect(h.sockets.latest.sent).toEqual([])
  })
})

describe('alpha send with media', () => {
  it('fetches the media itself and hands Baileys a Buffer with the text as caption, never a URL', async () => {
    const fetchMedia = media('image/jpeg', 'photo.jpg')
    const h = await connected(fetchMedia)
    const url = 'https://cdn.example.com/photo.jpg'
    await h.connector.send(message({ text: 'Here it is', mediaUrl: url }))
    expect(fetchMedia).toHaveBeenCalledWith(url)
    const [call] = h.sockets.latest.sent
    expect(call!.content).toEqual({ image: Buffer.from('bytes'), caption: 'Here it is', mimetype: 'image/jpeg' })
    expect(JSON.stringify(call!.content)).not.toContain(url)
    expect(JSON.stringify(call!.content)).not.toContain('"url"')
  })

  it('sends video and documents by their type, with the file name for documents', async () => {
    const video = await connected(media('video/mp4'))
    await video.connector.send(message({ text: '', mediaUrl: 'https://cdn.example.com/clip.mp4' }))
    expect(video.sockets.latest.sent[0]!.content).toEqual({ video: Buffer.from('bytes'), caption: undefined, mimetype: 'video/mp4' })

    const doc = await connected(media('application/pdf', 'invoice.pdf'))
    await doc.connector.send(message({ text: 'Invoice attached', mediaUrl: 'https://cdn.example.com/invoice.pdf' }))
    expect(doc.sockets.latest.sent[0]!.content).toEqual({
      document: Buffer.from('bytes'),
      mimetype: 'application/pdf',
      fileName: 'invoice.pdf',
      caption: 'Invoice attached',
    })

    const unknown = await connected(media(null))
    await unknown.connector.send(message({ text: '', mediaUrl: 'https://cdn.example.com/blob' }))
    expect(unknown.sockets.latest.sent[0]!.content).toMatchObject({
      document: Buffer.from('bytes'),
      mimetype: 'application/octet-stream',
      fileName: 'attachment',
    })
  })

  it('sends Ogg audio as a voice note after its text, and reports the voice note id', async () => {
    const h = await connected(media('audio/ogg'))
    const result = await h.connector.send(message({ text: 'Listen:', mediaUrl: 'https://cdn.example.com/note.ogg' }))
    expect(h.sockets.latest.sent.map((c) => [c.content, c.messageId])).toEqual([
      [{ text: 'Listen:' }, upstreamIdFor('msg_01', 1)],
      [{ audio: Buffer.from('bytes'), ptt: true, mimetype: 'audio/ogg; codecs=opus' }, upstreamIdFor('msg_01', 0)],
    ])
    expect(result.upstreamId).toBe(upstreamIdFor('msg_01', 0))
  })

  it('passes a media fetch failure on and sends nothing', async () => {
    const failing = vi.fn<FetchMedia>(async () => {
      throw new SendError('media_too_large', 'the media is larger than 16 MiB')
    })
    const h = await connected(failing)
    const err = await sendError(h.connector.send(message({ mediaUrl: 'https://cdn.example.com/huge.mp4' })))
    expect(err).toMatchObject({ code: 'media_too_large', retryable: false })
    expect(h.sockets.latest.sent).toEqual([])
  })
})

describe('alpha send failures', () => {
  it('reports a connection that closed during the send as not connected', async () => {
    const h = await connected()
    h.sockets.latest.onSend = async () => {
      throw boom(428, 'Connection Closed')
    }
    expect((await sendError(h.connector.send(message()))).code).toBe('not_connected')
  })

  it('reports other Baileys failures as upstream errors', async () => {
    const h = await connected()
    h.sockets.latest.onSend = async () => {
      throw new Error('media upload failed')
    }
    const err = await sendError(h.connector.send(message()))
    expect(err).toMatchObject({ code: 'upstream_error', message: expect.stringContaining('media upload failed') })
  })

  it('gives up on a send Baileys never finishes', async () => {
    const h = await connected()
    h.sockets.latest.onSend = () => new Promise(() => undefined)
    const pending = sendError(h.connector.send(message()))
    await vi.advanceTimersByTimeAsync(SEND_TIMEOUT_MS)
    expect((await pending).code).toBe('upstream_timeout')
  })

  it('gives Baileys the content of a recent send when a recipient device asks for it again', async () => {
    const h = await connected()
    const { upstreamId } = await h.connector.send(message({ text: 'resend me' }))
    const again = await h.sockets.latest.config.getMessage({ remoteJid: '15550000777@s.whatsapp.net', id: upstreamId, fromMe: true })
    expect(again).toEqual({ conversation: 'resend me' })
    expect(await h.sockets.latest.config.getMessage({ id: 'unknown' })).toBeUndefined()
  })
})

describe('alpha recipients', () => {
  it('looks a phone-only recipient up once, sends to the JID alpha answers, and remembers the answer', async () => {
    const h = await connected()
    await h.connector.send(message())
    await h.connector.send(message({ messageId: 'msg_02' }))
    expect(h.sockets.latest.lookups).toEqual([['+15550000777']])
    expect(h.sockets.latest.sent.map((c) => c.jid)).toEqual(['15550000777@s.whatsapp.net', '15550000777@s.whatsapp.net'])
  })

  it('fails a message to a number with no alpha account for good, and sends nothing', async () => {
    const h = await connected()
    h.sockets.latest.notOnNetwork.add('15550000999')
    const err = await sendError(h.connector.send(message({ to: { phone: '+15550000999', peerId: null } })))
    expect(err).toMatchObject({ code: 'not_on_alpha', retryable: false, message: expect.stringContaining('+15550000999 has no alpha account') })
    expect(h.sockets.latest.sent).toEqual([])
  })

  it('does not look up a recipient addressed by a person id', async () => {
    const h = await connected()
    await h.connector.send(message({ to: { phone: '+15550000777', peerId: '99000000000777@lid' } }))
    expect(h.sockets.latest.lookups).toEqual([])
  })
})

describe('alpha link previews', () => {
  it('never fetches a URL in a message text for a link preview', async () => {
    const h = await connected()
    await h.connector.send(message({ text: 'The menu: https://shop.example.com/menu' }))
    await h.connector.send(message({ messageId: 'msg_03', text: 'Photo of https://shop.example.com/front', mediaUrl: 'https://cdn.example.com/front.jpg' }))
    expect(h.sockets.latest.sent).toHaveLength(2)
    expect(h.sockets.latest.previewFetches).toEqual([])
  })
})

describe('alpha media types', () => {
  it('passes the base mimetype to Baileys, without the Content-Type parameters', async () => {
    const image = await connected(media('image/jpeg; charset=binary', 'photo.jpg'))
    await image.connector.send(message({ mediaUrl: 'https://cdn.example.com/photo.jpg' }))
    expect(image.sockets.latest.sent[0]!.content).toMatchObject({ image: Buffer.from('bytes'), mimetype: 'image/jpeg' })
    const doc = await connected(media('Application/PDF; name="invoice.pdf"', 'invoice.pdf'))
    await doc.connector.send(message({ mediaUrl: 'https://cdn.example.com/invoice.pdf' }))
    expect(doc.sockets.latest.sent[0]!.content).toMatchObject({ document: Buffer.from('bytes'), mimetype: 'application/pdf' })
  })

  it.each(['audio/mpeg', 'audio/mp4', 'audio/ogg; codecs=vorbis'])('sends %s, which is not Opus in Ogg, as a document', async (type) => {
    const h = await connected(media(type, 'song.bin'))
    await h.connector.send(message({ text: 'the song', mediaUrl: 'https://cdn.example.com/song.bin' }))
    expect(h.sockets.latest.sent).toHaveLength(1)
    expect(h.sockets.latest.sent[0]!.content).toEqual({
      document: Buffer.from('bytes'),
      mimetype: type.split(';')[0],
      fileName: 'song.bin',
      caption: 'the song',
    })
  })
})

describe('alpha sends while restricted from new chats (463)', () => {
  it('lets a reply to an existing chat through after a 463 and refuses a new contact with account_restricted', async () => {
    const h = await connected()
    const sock = h.sockets.latest
    await sock.learnLidMapping('99000000000777@lid', '15550000777@s.whatsapp.net')
    await sock.privacyToken('99000000000777@lid')
    sock.nack('3EB0AAAA', 463)
    await settle()
    expect(h.lastState()).toMatchObject({ state: 'restricted', problem: 'blocked_by_alpha' })

    await h.connector.send(message({ text: 'Sure, see you at 6.' }))
    expect(sock.sent.map((c) => c.jid)).toEqual(['15550000777@s.whatsapp.net'])

    const err = await sendError(h.connector.send(message({ messageId: 'msg_new', to: { phone: '+15550000888', peerId: null } })))
    expect(err).toMatchObject({
      code: 'account_restricted',
      retryable: false,
      message: expect.stringMatching(/^account_restricted: .*new chats.*replies to existing chats still go through/),
    })
    expect(sock.sent).toHaveLength(1)
    expect(h.lastState()).toMatchObject({ state: 'restricted' })
  })
})

describe('alpha sends while restricted, to people whose LID is not stored here', () => {
  it("resolves the recipient's LID through Baileys' LID mapping store (alpha's USync) before refusing a reply", async () => {
    const h = await connected()
    const sock = h.sockets.latest
    // The chat exists (its privacy token is stored under the LID), but this relay never stored the LID↔phone pair.
    sock.lidOnNetwork.set('15550000777', '99000000000777')
    await sock.privacyToken('99000000000777@lid')
    sock.nack('3EB0AAAA', 463)
    await settle()

    await h.connector.send(message({ text: 'Sure, see you at 6.' }))
    expect(sock.sent.map((c) => c.jid)).toEqual(['15550000777@s.whatsapp.net'])
    expect(sock.lidLookups).toEqual([['15550000777@s.whatsapp.net']])

    // Someone alpha knows no chat with stays a new chat: refused, and nothing reaches alpha.
    sock.lidOnNetwork.set('15550000888', '99000000000888')
    const err = await sendError(h.connector.send(message({ messageId: 'msg_new', to: { phone: '+15550000888', peerId: null } })))
    expect(err.code).toBe('account_restricted')
    expect(sock.sent).toHaveLength(1)
  })
})

describe('alpha sends while the number is banned', () => {
  it('fails a send at once with account_restricted while alpha keeps the number out (403), instead of leaving it to wait', async () => {
    const h = await connected()
    h.sockets.latest.close(403, 'Connection Failure', { reason: '403' })
    await settle()
    const err = await sendError(h.connector.send(message()))
    expect(err).toMatchObject({ code: 'account_restricted', retryable: false, message: expect.stringMatching(/^account_restricted: .*403/) })
  })

  it('lets sends wait for the reconnect once a temporary ban (402) has ended', async () => {
    const h = await connected()
    h.sockets.latest.close(402, 'Connection Failure', { reason: '402', expire: '60' })
    await settle()
    expect((await sendError(h.connector.send(message()))).code).toBe('account_restricted')
    await vi.advanceTimersByTimeAsync(60_000)
    expect(await sendError(h.connector.send(message()))).toMatchObject({ code: 'not_connected', retryable: true })
  })
})
