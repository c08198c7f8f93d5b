/**
 * One switch over the event batches of `sock.ev.process`, each event delegated to a handleX function. Connection
 * lifecycle goes back to the client; messages, receipts, contacts, LID mappings and the new-chat cap are handled here. Events the
 * gateway has no use for are logged at debug by name only.
 */
import type { BaileysEventMap, ConnectionState, Contact, WAMessage, WAMessageUpdate } from '@whiskeysockets/baileys'
import type { Logger } from 'pino'
import type { ConnectorEvents, ImportedContact, InboundAttachment, InboundMessage } from '../connector'
import { toInbound, toReaction, toReceipt } from './convert'
import { isLidJid, jidToPhone, personJid } from './ids'
import { newChatCapRisk } from './message-cap'
import type { PeerDirectory } from './peers'

export type EventContext = {
  log: Logger
  now(): number
  events: ConnectorEvents
  peers: PeerDirectory
  saveCreds(): Promise<void>
  onConnection(update: Partial<ConnectionState>): Promise<void>
  /** alpha refused one of our sends with this code (463: the number is restricted). */
  onSendRefused(errorCode: number): void
  /** The message's media as an attachment to store (media-download.ts); absent: media is not stored. */
  mediaOf?(msg: WAMessage): InboundAttachment | null
  /** Keeps a media message with the session until the edge stored it (pending-media.ts); resolves with the release. */
  keep?(msg: WAMessage): Promise<() => void>
}

type Batch = Partial<BaileysEventMap>

/** Handled in this order within a batch (only buffered events share one): creds and mappings first, lifecycle last. */
const ORDER: ReadonlyArray<keyof BaileysEventMap> = [
  'creds.update',
  'lid-mapping.update',
  'contacts.upsert',
  'contacts.update',
  'messaging-history.set',
  'messages.upsert',
  'messages.update',
  'message-capping.update',
  'connection.update',
]

export async function handleEvents(batch: Batch, ctx: EventContext): Promise<void> {
  for (const name of ORDER) {
    if (batch[name] === undefined) continue
    switch (name) {
      case 'creds.update':
        handleCredsUpdate(ctx)
        break
      case 'lid-mapping.update':
        handleLidMapping(batch[name], ctx)
        break
      case 'contacts.upsert':
        handleContacts(batch[name], ctx, 'address_book')
        break
      case 'contacts.update':
        handleContacts(batch[name], ctx, 'push_name')
        break
      case 'messaging-history.set':
        await handleHistory(batch[name], ctx)
        break
      case 'messages.upsert':
        await handleUpsert(batch[name], ctx)
        break
      case 'messages.update':
        handleMessageUpdates(batch[name], ctx)
        break
      case 'message-capping.update':
        handleMessageCapping(batch[name], ctx)
        break
      case 'connection.update':
        await ctx.onConnection(batch[name])
        break
    }
  }
  const unhandled = Object.keys(batch).filter((name) => !(ORDER as readonly string[]).includes(name))
  if (unhandled.length > 0) ctx.log.debug({ events: unhandled }, 'alpha: events not used by the gateway')
}

/** alpha's new-chat cap warnings and the cap itself, as the ban-risk signal `new_chat_cap` (message-cap.ts). */
function handleMessageCapping(info: BaileysEventMap['message-capping.update'], ctx: EventContext) {
  const report = newChatCapRisk(info, ctx.now())
  ctx.log.info({ capping: info.capping_status ?? null, used: info.used_quota ?? null, total: info.total_quota ?? null }, 'alpha: new-chat message cap update')
  if (report) ctx.events.risk?.(report)
}

/**
 * Not awaited: Baileys does not wait for its listeners, so holding our queue until the store answers would only
 * delay the messages behind it. The write is batched with the key writes and retried by the store if it fails.
 */
function handleCredsUpdate(ctx: EventContext) {
  ctx.saveCreds().catch((err: unknown) => {
    ctx.log.error({ err: err instanceof Error ? err.message : String(err) }, 'alpha: saving creds failed')
  })
}

/** Baileys stores the pair itself (in the `lid-mapping` keys); later peer lookups read it from there. */
function handleLidMapping(mapping: BaileysEventMap['lid-mapping.update'], ctx: EventContext) {
  ctx.log.debug({ known: isLidJid(mapping.lid) && jidToPhone(mapping.pn) !== null }, 'alpha: LID mapping learned')
}

/**
 * Both message types carry messages to deliver: `notify` live, `append` the backlog after a reconnect (OpenWA#1660).
 * A message with media is reported only once its file is stored, which takes a while: it is kept with the session
 * first (all of a batch's at once, one write), so a relay killed meanwhile does not lose what alpha counts delivered.
 */
async function handleUpsert(upsert: BaileysEventMap['messages.upsert'], ctx: EventContext) {
  const ready: InboundMessage[] = []
  const kept: Array<Promise<() => void> | null> = []
  const skipped: Record<string, number> = {}
  for (const msg of upsert.messages) {
    // Our own send echoed back (Baileys' emitOwnEvents, off in socket.ts): a receipt or error ack that arrived while
    // the echo sat in the event buffer was merged into it, so its status is the receipt (event-buffer.js).
    if (msg.key.fromMe) {
      if (msg.status !== undefined && msg.status !== null)
        handleReceipt({ key: msg.key, update: { status: msg.status, messageStubParameters: msg.messageStubParameters } }, ctx)
      skipped['own message'] = (skipped['own message'] ?? 0) + 1
      continue
    }
    const reaction = await toReaction(msg, ctx.peers, ctx.now())
    if (reaction) {
      ctx.events.reaction?.(reaction)
      continue
    }
    const result = await toInbound(msg, ctx.peers, ctx.now())
    if (!result.ok) {
      skipped[result.reason] = (skipped[result.reason] ?? 0) + 1
      continue
    }
    const attachment = result.kind === 'text' ? null : (ctx.mediaOf?.(msg) ?? null)
    ready.push(attachment ? { ...result.message, attachment } : result.message)
    kept.push(attachment && ctx.keep ? ctx.keep(msg) : null)
  }
  const releases = await Promise.all(kept)
  for (const [i, message] of ready.entries()) {
    const release = releases[i]
    ctx.events.inbound(release ? { ...message, onCommitted: release } : message)
  }
  ctx.log.debug({ type: upsert.type, delivered: ready.length, skipped }, 'alpha: messages upserted')
}

function handleMessageUpdates(updates: WAMessageUpdate[], ctx: EventContext) {
  for (const u of updates) handleReceipt(u, ctx)
}

function handleReceipt(u: WAMessageUpdate, ctx: EventContext) {
  const mapped = toReceipt(u)
  if (!mapped) return
  ctx.events.receipt(mapped.receipt)
  if (mapped.errorCode !== null) ctx.onSendRefused(mapped.errorCode)
}

/** Known LID → phone JID pairs that arrived with the same batch (history sync carries them next to the contacts). */
type PairsByLid = ReadonlyMap<string, string>

function toImported(c: Partial<Contact>, hasChat: boolean, ctx: EventContext, pairs: PairsByLid = new Map()): ImportedContact | null {
  const ids = [c.id, c.lid, c.phoneNumber].map((j) => personJid(j)).filter((j): j is string => j !== null)
  const lid = ids.find((j) => isLidJid(j)) ?? null
  const pn = ids.find((j) => jidToPhone(j) !== null) ?? (lid ? (pairs.get(lid) ?? null) : null)
  const id = lid ?? pn
  if (!id) return null
  const name = c.name?.trim() || c.notify?.trim() || c.verifiedName?.trim() || null
  if (name) ctx.peers.rememberName(id, name, c.name?.trim() ? 'address_book' : 'push_name')
  return { id, lid, phone: jidToPhone(pn), name, hasChat }
}

function handleContacts(contacts: Array<Partial<Contact>>, ctx: EventContext, source: 'address_book' | 'push_name') {
  const imported = contacts.map((c) => toImported(c, false, ctx)).filter((c): c is ImportedContact => c !== null)
  // `contacts.update` only refreshes push names and pictures: names are remembered, nothing is imported.
  if (source === 'address_book' && imported.length > 0) ctx.events.contacts?.(imported)
}

async function handleHistory(history: BaileysEventMap['messaging-history.set'], ctx: EventContext) {
  const pairs = new Map<string, string>()
  for (const { lid, pn } of history.lidPnMappings ?? []) {
    const l = personJid(lid)
    const p = personJid(pn)
    if (l && p && isLidJid(l) && jidToPhone(p)) pairs.set(l, p)
  }
  // A chunk may come without its pairs (first link): the ones Baileys stored earlier fill in the phones.
  const lids = [...history.contacts.flatMap((c) => [c.id, c.lid]), ...history.chats.map((c) => c.id)]
  for (const jid of lids) {
    const lid = personJid(jid)
    if (!lid || !isLidJid(lid) || pairs.has(lid)) continue
    const pn = await ctx.peers.phoneFor(lid)
    if (pn) pairs.set(lid, pn)
  }
  const chatIds = new Set(history.chats.map((chat) => personJid(chat.id)).filter((j): j is string => j !== null))
  const byId = new Map<string, ImportedContact>()
  const phones = new Set<string>()
  const add = (c: ImportedContact | null) => {
    if (!c || byId.has(c.id) || (c.phone !== null && phones.has(c.phone))) return
    byId.set(c.id, c)
    if (c.phone) phones.add(c.phone)
  }
  for (const c of history.contacts) {
    const inChats = [c.id, c.lid, c.phoneNumber].some((j) => {
      const person = personJid(j)
      return person !== null && chatIds.has(person)
    })
    add(toImported(c, inChats, ctx, pairs))
  }
  // A 1:1 chat whose person is not among the contacts still counts for `import_existing_chats`.
  for (const chat of history.chats) {
    if (chat.id) add(toImported({ id: chat.id, name: chat.name ?? undefined }, true, ctx, pairs))
  }
  ctx.log.debug({ contacts: byId.size, chats: chatIds.size, syncType: history.syncType ?? null }, 'alpha: history sync')
  if (byId.size > 0) ctx.events.contacts?.([...byId.values()])
}
