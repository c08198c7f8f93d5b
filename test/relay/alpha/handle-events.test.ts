// Inbound alpha events through the driver: notify and append upserts, LID mapping, receipts, contacts, creds.
import { proto } from '@whiskeysockets/baileys'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { harness, incoming, linkedStore, settle, useFakeClock, type Harness } from './harness'

beforeEach(useFakeClock)
afterEach(() => {
  vi.useRealTimers()
})

async function connected(opts: Parameters<typeof harness>[0] = {}): Promise<Harness> {
  const h = await harness({ store: await linkedStore(), ...opts })
  await h.startOpen()
  return h
}

describe('alpha inbound messages', () => {
  it('delivers a live (notify) message keyed by LID with the phone from the envelope', async () => {
    const h = await connected()
    await h.sockets.latest.receive([incoming({ key: { id: 'A1' }, text: 'Is the shop open?' })], 'notify')
    await settle()
    expect(h.inbound).toEqual([
      {
        upstreamId: 'A1',
        from: { id: '99000000000777@lid', lid: '99000000000777@lid', phone: '+15550000777', name: 'Ada' },
        text: 'Is the shop open?',
        media: null,
        sentAt: 1_788_000_000_000,
        // The driver counts it until the edge stored it (a stop waits for that).
        onCommitted: expect.any(Function),
      },
    ])
  })

  it('delivers the messages that arrived while offline (append), not only live ones', async () => {
    const h = await connected()
    await h.sockets.latest.receive([incoming({ key: { id: 'OFF1' }, text: 'first' }), incoming({ key: { id: 'OFF2' }, text: 'second' })], 'append')
    await settle()
    expect(h.inbound.map((m) => [m.upstreamId, m.text])).toEqual([
      ['OFF1', 'first'],
      ['OFF2', 'second'],
    ])
  })

  it('keys a phone-addressed message by the LID from its envelope', async () => {
    const h = await connected()
    await h.sockets.latest.receive(
      [incoming({ key: { remoteJid: '15550000777@s.whatsapp.net', remoteJidAlt: '99000000000777@lid', addressingMode: 'pn' } })],
      'notify'
    )
    await settle()
    expect(h.inbound[0]!.from).toMatchObject({ id: '99000000000777@lid', lid: '99000000000777@lid', phone: '+15550000777' })
  })

  it('fills the phone of a LID-only message from a mapping alpha sent earlier', async () => {
    const h = await connected()
    await h.sockets.latest.learnLidMapping('99000000000888@lid', '15550000888@s.whatsapp.net')
    await h.sockets.latest.receive([incoming({ key: { remoteJid: '99000000000888@lid', remoteJidAlt: undefined } })], 'notify')
    await settle()
    expect(h.inbound[0]!.from).toMatchObject({ id: '99000000000888@lid', phone: '+15550000888' })
  })

  it('leaves the phone empty while unknown and fills it once the mapping is learned', async () => {
    const h = await connected()
    const lidOnly = { remoteJid: '99000000000999@lid', remoteJidAlt: undefined }
    await h.sockets.latest.receive([incoming({ key: lidOnly })], 'notify')
    await settle()
    expect(h.inbound[0]!.from).toEqual({ id: '99000000000999@lid', lid: '99000000000999@lid', phone: null, name: 'Ada' })
    await h.sockets.latest.learnLidMapping('99000000000999@lid', '15550000999@s.whatsapp.net')
    await h.sockets.latest.receive([incoming({ key: lidOnly })], 'notify')
    await settle()
    expect(h.inbound[1]!.from).toMatchObject({ id: '99000000000999@lid', phone: '+15550000999' })
  })

  it('uses the LID it already knows for a message addressed by phone only', async () => {
    const h = await connected()
    await h.sockets.latest.receive([incoming()], 'notify')
    await h.sockets.latest.receive([incoming({ key: { remoteJid: '15550000777@s.whatsapp.net', remoteJidAlt: undefined, addressingMode: 'pn' } })], 'notify')
    await settle()
    expect(h.inbound[1]!.from.id).toBe('99000000000777@lid')
  })

  it('skips our own messages, groups, status, newsletters, reactions, protocol messages and stubs', async () => {
    const h = await connected()
    await h.sockets.latest.receive(
      [
        incoming({ key: { fromMe: true } }),
        incoming({ key: { remoteJid: '120363025555555555@g.us', participant: '99000000000777@lid' } }),
        incoming({ key: { remoteJid: 'status@broadcast', participant: '99000000000777@lid' } }),
        incoming({ key: { remoteJid: '120363000000000001@newsletter' } }),
        incoming({ message: { reactionMessage: { text: '👍', key: { id: 'X' } } } }),
        incoming({ message: { protocolMessage: { type: 0 } } }),
        incoming({ message: null, messageStubType: 1 }),
        incoming({ key: { id: 'KEEP' }, text: 'kept' }),
      ],
      'notify'
    )
    await settle()
    expect(h.inbound.map((m) => m.upstreamId)).toEqual(['KEEP'])
  })

  it('unwraps ephemeral and view-once wrappers and reads extended text', async () => {
    const h = await connected()
    await h.sockets.latest.receive(
      [
        incoming({ message: { ephemeralMessage: { message: { extendedTextMessage: { text: 'see https://example.com' } } } } }),
        incoming({ message: { viewOnceMessageV2: { message: { imageMessage: { caption: 'look', mimetype: 'image/jpeg' } } } } }),
      ],
      'notify'
    )
    await settle()
    expect(h.inbound.map((m) => m.text)).toEqual(['see https://example.com', 'look'])
  })

  it('delivers inbound media as its caption, without a media URL', async () => {
    const h = await connected()
    await h.sockets.latest.receive(
      [
        incoming({ message: { imageMessage: { caption: 'the receipt', mimetype: 'image/jpeg' } } }),
        incoming({ message: { audioMessage: { ptt: true, seconds: 4 } } }),
      ],
      'notify'
    )
    await settle()
    expect(h.inbound.map((m) => [m.text, m.media])).toEqual([
      ['the receipt', null],
      ['', null],
    ])
  })
})

describe('alpha inbound media', () => {
  it('hands each media message to the relay core as an attachment with its kind, type, name and declared size', async () => {
    const h = await connected()
    await h.sockets.latest.receive(
      [
        incoming({ message: { imageMessage: { caption: 'the receipt', mimetype: 'image/jpeg', fileLength: 1234 } } }),
        incoming({ message: { audioMessage: { ptt: true, seconds: 4, mimetype: 'audio/ogg; codecs=opus' } } }),
        incoming({ message: { audioMessage: { mimetype: 'audio/mpeg' } } }),
        incoming({ message: { videoMessage: { mimetype: 'video/mp4' } } }),
        incoming({ message: { documentMessage: { mimetype: 'application/pdf', fileName: 'invoice.pdf', fileLength: 99 } } }),
        incoming({ message: { stickerMessage: {} } }),
        incoming({ text: 'plain' }),
      ],
      'notify'
    )
    await settle()
    const seen = h.inbound.map((m) =>
      m.attachment ? { kind: m.attachment.kind, type: m.attachment.contentType, name: m.attachment.fileName, size: m.attachment.declaredSize } : null
    )
    expect(seen).toEqual([
      { kind: 'image', type: 'image/jpeg', name: null, size: 1234 },
      { kind: 'voice_note', type: 'audio/ogg; codecs=opus', name: null, size: null },
      { kind: 'audio', type: 'audio/mpeg', name: null, size: null },
      { kind: 'video', type: 'video/mp4', name: null, size: null },
      { kind: 'document', type: 'application/pdf', name: 'invoice.pdf', size: 99 },
      { kind: 'sticker', type: 'image/webp', name: null, size: null },
      null,
    ])
  })
})

describe('alpha receipts', () => {
  it('maps delivery, read and played receipts of our sends, and ignores the rest', async () => {
    const h = await connected()
    h.sockets.latest.receipt('3EB0111', 3)
    h.sockets.latest.receipt('3EB0111', 4)
    h.sockets.latest.receipt('3EB0222', 5)
    h.sockets.latest.emit({ 'messages.update': [{ key: { remoteJid: '99000000000777@lid', id: 'IN9', fromMe: false }, update: { status: 4 } }] })
    h.sockets.latest.emit({ 'messages.update': [{ key: { remoteJid: '99000000000777@lid', id: '3EB0333', fromMe: true }, update: { status: 2 } }] })
    await settle()
    expect(h.receipts).toEqual([
      { upstreamId: '3EB0111', status: 'delivered' },
      { upstreamId: '3EB0111', status: 'read' },
      { upstreamId: '3EB0222', status: 'read' },
    ])
  })
})

describe('alpha contacts', () => {
  it('reports address-book contacts with LID and phone, and prefers their names over push names', async () => {
    const h = await connected()
    h.sockets.latest.emit({ 'contacts.upsert': [{ id: '99000000000777@lid', phoneNumber: '15550000777@s.whatsapp.net', name: 'Ada Lovelace' }] })
    await settle()
    expect(h.contacts).toEqual([[{ id: '99000000000777@lid', lid: '99000000000777@lid', phone: '+15550000777', name: 'Ada Lovelace', hasChat: false }]])
    await h.sockets.latest.receive([incoming({ pushName: 'ada' })], 'notify')
    await settle()
    expect(h.inbound[0]!.from.name).toBe('Ada Lovelace')
  })

  it('reports history-sync contacts and chats, marking who has a chat and filling phones from the sync mappings', async () => {
    const h = await connected()
    h.sockets.latest.emit({
      'messaging-history.set': {
        chats: [{ id: '99000000000111@lid' }, { id: '99000000000222@lid', name: 'Bob' }, { id: '120363025555555555@g.us' }],
        contacts: [
          { id: '99000000000111@lid', name: 'Cleo' },
          { id: '15550000333@s.whatsapp.net', notify: 'Dan' },
        ],
        messages: [],
        lidPnMappings: [
          { lid: '99000000000111@lid', pn: '15550000111@s.whatsapp.net' },
          { lid: '99000000000222@lid', pn: '15550000222@s.whatsapp.net' },
        ],
        isLatest: true,
      },
    })
    await settle()
    expect(h.contacts).toEqual([
      [
        { id: '99000000000111@lid', lid: '99000000000111@lid', phone: '+15550000111', name: 'Cleo', hasChat: true },
        { id: '15550000333@s.whatsapp.net', lid: null, phone: '+15550000333', name: 'Dan', hasChat: false },
        { id: '99000000000222@lid', lid: '99000000000222@lid', phone: '+15550000222', name: 'Bob', hasChat: true },
      ],
    ])
  })
})

describe('alpha creds and logs', () => {
  it('persists creds on every creds.update', async () => {
    const h = await connected()
    const writes = h.store.writes.length
    h.sockets.latest.config.auth.creds.nextPreKeyId = 4242
    h.sockets.latest.emit({ 'creds.update': { nextPreKeyId: 4242 } })
    await settle()
    expect(h.store.writes.length).toBe(writes + 1)
    expect(h.store.writes.at(-1)!.get('creds')).toContain('"nextPreKeyId":4242')
  })

  it('never writes message text to the logs, even at trace level', async () => {
    const h = await connected({ logLevel: 'trace' })
    await h.sockets.latest.receive(
      [incoming({ text: 'my secret pin is 4711' }), incoming({ message: { imageMessage: { caption: 'secret caption 4711' } } })],
      'notify'
    )
    await h.connector.send({ messageId: 'msg_1', to: { phone: '+15550000777', peerId: null }, text: 'reply with secret 4711', mediaUrl: null })
    await settle()
    expect(h.inbound).toHaveLength(2)
    expect(h.logLines.length).toBeGreaterThan(0)
    expect(h.logLines.join('\n')).not.toContain('4711')
  })
})

describe('alpha own-send echoes', () => {
  const reply = { messageId: 'msg_echo', to: { phone: '+15550000777', peerId: null }, text: 'On my way', mediaUrl: null }

  it('reports a failure ack that arrives while the echo of our own send would sit in the event buffer', async () => {
    const h = await connected()
    const { upstreamId } = await h.connector.send(reply)
    await settle()
    h.sockets.latest.nack(upstreamId, 479, '15550000777@s.whatsapp.net')
    await vi.advanceTimersByTimeAsync(200)
    await settle()
    expect(h.receipts).toEqual([{ upstreamId, status: 'failed', error: 'alpha refused the message (error 479)', code: 479 }])
  })

  it('reads a receipt or a 463 merged into an own-send echo as the receipt (safety net)', async () => {
    const h = await connected()
    h.sockets.latest.forceOwnEcho = true
    const first = await h.connector.send(reply)
    await settle()
    h.sockets.latest.receipt(first.upstreamId, 3, '15550000777@s.whatsapp.net')
    await vi.advanceTimersByTimeAsync(200)
    await settle()
    const second = await h.connector.send({ ...reply, messageId: 'msg_echo_2' })
    await settle()
    h.sockets.latest.nack(second.upstreamId, 463, '15550000777@s.whatsapp.net')
    await vi.advanceTimersByTimeAsync(200)
    await settle()
    expect(h.receipts).toEqual([
      { upstreamId: first.upstreamId, status: 'delivered' },
      { upstreamId: second.upstreamId, status: 'failed', error: expect.stringContaining('463'), code: 463 },
    ])
    expect(h.lastState()).toMatchObject({ state: 'restricted', problem: 'blocked_by_alpha' })
  })
})

describe('alpha chats nobody reads', () => {
  it('has Baileys NACK status, newsletter and group messages unread: nothing delivered, no key written to the edge', async () => {
    const h = await connected()
    const writes = h.store.writes.length
    await h.sockets.latest.receive(
      [
        incoming({ key: { id: 'ST1', remoteJid: 'status@broadcast', remoteJidAlt: undefined, participant: '99000000000777@lid' } }),
        incoming({ key: { id: 'NL1', remoteJid: '120363000000000001@newsletter', remoteJidAlt: undefined } }),
        incoming({ key: { id: 'GR1', remoteJid: '120363025555555555@g.us', remoteJidAlt: undefined, participant: '99000000000777@lid' } }),
      ],
      'notify'
    )
    await settle()
    expect(h.sockets.latest.nacked.map((n) => n.id)).toEqual(['ST1', 'NL1', 'GR1'])
    expect(h.inbound).toEqual([])
    expect(h.store.writes.length).toBe(writes)
  })
})

describe('alpha history sync', () => {
  it('fills phones from the LID pairs Baileys stored earlier when a buffered history sync arrives without them', async () => {
    const h = await connected()
    await h.sockets.latest.learnLidMapping('99000000000111@lid', '15550000111@s.whatsapp.net')
    await settle()
    h.sockets.latest.historySync({
      chats: [{ id: '99000000000111@lid' }],
      contacts: [{ id: '99000000000111@lid', name: 'Cleo' }],
      messages: [],
      lidPnMappings: [],
      isLatest: true,
    })
    await settle()
    expect(h.contacts).toEqual([[{ id: '99000000000111@lid', lid: '99000000000111@lid', phone: '+15550000111', name: 'Cleo', hasChat: true }]])
  })
})

describe('alpha history sync types', () => {
  // What a notification carries (proto.Message's list: the chunk types, and two that announce no chunk at all).
  const { HistorySyncType } = proto.Message
  /** A chunk as our phone announces it: downloadable (a direct path), or the bootstrap inline. */
  const chunk = (syncType: number) =>
    proto.Message.HistorySyncNotification.create(
      syncType === HistorySyncType.INITIAL_BOOTSTRAP
        ? { syncType, initialHistBootstrapInlinePayload: Buffer.from('deflated') }
        : { syncType, directPath: `/v/t62.chunk-${syncType}`, fileLength: 4_000_000 }
    )
  const set = { chats: [], contacts: [{ id: '99000000000111@lid', notify: 'Cleo' }], messages: [], lidPnMappings: [], isLatest: false }

  it('has Baileys inflate only the chunks the driver reads: the bootstrap, push names and non-blocking data', async () => {
    const h = await connected()
    const sock = h.sockets.latest
    for (const type of Object.values(HistorySyncType)) if (typeof type === 'number') sock.historyNotification(chunk(type), set)
    expect(sock.historyInflated.sort()).toEqual([HistorySyncType.INITIAL_BOOTSTRAP, HistorySyncType.PUSH_NAME, HistorySyncType.NON_BLOCKING_DATA].sort())
    expect(sock.historySkipped.sort()).toEqual(
      [
        HistorySyncType.INITIAL_STATUS_V3,
        HistorySyncType.FULL,
        HistorySyncType.RECENT,
        HistorySyncType.ON_DEMAND,
        HistorySyncType.NO_HISTORY,
        HistorySyncType.MESSAGE_ACCESS_STATUS,
      ].sort()
    )
  })

  it('still lets Baileys wait for the bootstrap and the app-state sync (the address book) on a first link', async () => {
    const h = await connected()
    // chats.js asks with a bare RECENT notification whether any history will come at all; "no" skips both.
    const probe = proto.Message.HistorySyncNotification.create({ syncType: HistorySyncType.RECENT })
    expect(h.sockets.latest.effective.shouldSyncHistoryMessage(probe)).toBe(true)
  })
})
