/**
 * The part of a Baileys socket the driver uses, and the factory that makes one. The real `makeWASocket` is checked
 * against `AlphaSocket` at compile time below; the test fake implements the same type, so the two cannot drift.
 */
import makeWASocket, { Browsers, isJidBroadcast, isJidGroup, isJidNewsletter, proto } from '@whiskeysockets/baileys'
import type { Logger } from 'pino'
import type {
  AnyMessageContent,
  AuthenticationState,
  BaileysEventMap,
  BinaryNode,
  CacheStore,
  Contact,
  MessageContentGenerationOptions,
  MiscMessageGenerationOptions,
  ReachoutTimelockState,
  SignalRepositoryWithLIDStore,
  UserFacingSocketConfig,
  WAMessage,
  WAMessageKey,
  WAVersion,
} from '@whiskeysockets/baileys'

/**
 * Options of every send. `getUrlInfo: undefined` turns link previews off explicitly: `sendMessage` spreads these over
 * its own options, whose `getUrlInfo` would fetch the first URL of a text from the relay host (past the media guard)
 * whenever link-preview-js is installed (Socket/messages-send.js, Utils/messages.js `generateLinkPreviewIfRequired`).
 */
export type SendOptions = MiscMessageGenerationOptions & Pick<MessageContentGenerationOptions, 'getUrlInfo'>

export function sendOptions(messageId: string): SendOptions {
  return { messageId, getUrlInfo: undefined }
}

export type AlphaSocket = {
  /** Asks the sender's phone to upload expired media again; resolves with the message pointing at the new file. */
  updateMediaMessage(msg: WAMessage): Promise<WAMessage>
  ev: {
    process(handler: (events: Partial<BaileysEventMap>) => void | Promise<void>): () => void
    /** Releases what the event buffer holds, now (Baileys' own; a no-op when nothing is buffered). */
    flush(): boolean
  }
  /**
   * Raw stanzas by Baileys' callback names (`CB:<tag>,<attr>:<value>`) and `frame` for every frame received. Removing
   * Baileys' own listener is how passkey linking takes over its QR rotation (passkey-qr.ts).
   */
  ws: { on(event: string, listener: (node: BinaryNode) => void): unknown; removeAllListeners(event: string): unknown }
  /** Sends a stanza (the passkey ceremony's acks and the `pair-device` answer). */
  sendNode(node: BinaryNode): Promise<void>
  /**
   * Sends an IQ and waits for the answer with its id: undefined when the wait ran out (Baileys may instead throw its
   * 408), a Boom with the code as `data` when the answer carries `<error>` (WABinary `assertNodeErrorFree`).
   */
  query(node: BinaryNode, timeoutMs?: number): Promise<BinaryNode | undefined>
  /**
   * Baileys' signal repository; its LID mapping store answers from the stored pairs and asks alpha (a USync LID query)
   * for a phone number it has none for, storing the answer.
   */
  readonly signalRepository: Pick<SignalRepositoryWithLIDStore, 'lidMapping'>
  /** Our own account once known (`creds.me`): `id` is the phone JID with device, `lid` our LID. */
  readonly user: Contact | undefined
  requestPairingCode(phoneNumber: string): Promise<string>
  sendMessage(jid: string, content: AnyMessageContent, options?: SendOptions): Promise<WAMessage | undefined>
  /** USync contact lookup: the numbers that have an account, with their JID; numbers without one are left out. */
  onWhatsApp(...phoneNumber: string[]): Promise<Array<{ jid: string; exists: boolean }> | undefined>
  fetchAccountReachoutTimelock(): Promise<ReachoutTimelockState>
  /** Read receipts for the given inbound messages (issue 25; only ever on request, never automatic). */
  readMessages(keys: WAMessageKey[]): Promise<void>
  /** `composing` shows the account typing in the chat (issue 25). */
  sendPresenceUpdate(type: 'composing' | 'paused' | 'available' | 'unavailable' | 'recording', toJid?: string): Promise<void>
  logout(msg?: string): Promise<void>
  end(error: Error | undefined): void | Promise<void>
}

export type AlphaSocketConfig = {
  auth: AuthenticationState
  logger: Logger
  /** Baileys asks for a message we sent when the recipient's device needs it re-encrypted (retry receipts). */
  getMessage(key: WAMessageKey): Promise<proto.IMessage | undefined>
  /** One per connector, across reconnects: retry counts must survive a reconnect or a message is retried forever. */
  msgRetryCounterCache: CacheStore
  /** The current web client version when it could be fetched; Baileys' built-in one otherwise. */
  version?: WAVersion | undefined
}

export type MakeSocket = (config: AlphaSocketConfig) => AlphaSocket

/** A common desktop identity: some accounts reject unusual device names when linking (OpenWA#1666). */
export const ALPHA_BROWSER = Browsers.macOS('Chrome')

/**
 * Chats the gateway never reads: status updates and broadcast lists, newsletters (channels) and groups (the gateway is
 * 1:1; README, Known limits). Baileys acks them with a NACK (error 500) before decrypting, so they cost no
 * decryption and no key writes at the edge; the phone and the user's other devices still get them.
 */
export function isIgnoredChat(jid: string): boolean {
  return !!(isJidBroadcast(jid) || isJidNewsletter(jid) || isJidGroup(jid))
}

const { HistorySyncType } = proto.Message
/**
 * The history chunks the driver reads (handle-events.ts `messaging-history.set`): the bootstrap's chats and contacts
 * (`import_existing_chats`, `import_contacts`), push names, and the non-blocking data whose LID pairs Baileys stores.
 * RECENT, FULL, ON_DEMAND and status chunks would each be downloaded, inflated and buffered whole for nothing.
 * (`syncType` of the notification: `proto.Message.HistorySyncType`, the same values as the chunk's own.)
 */
const HISTORY_READ: ReadonlySet<proto.Message.HistorySyncType> = new Set([
  HistorySyncType.INITIAL_BOOTSTRAP,
  HistorySyncType.PUSH_NAME,
  HistorySyncType.NON_BLOCKING_DATA,
])

/**
 * Baileys' `shouldSyncHistoryMessage`. Baileys also calls it with a bare RECENT notification (no payload, no path) to
 * ask whether any history will come at all (Socket/chats.js, on `receivedPendingNotifications`); "no" there would skip
 * waiting for the bootstrap and the initial app-state sync that brings the address book, so that question is a yes.
 * A real chunk always carries its payload inline or a path to download it from.
 */
export function shouldSyncHistory(n: proto.Message.IHistorySyncNotification): boolean {
  const probe = !n.directPath && !n.initialHistBootstrapInlinePayload?.length
  return probe || (n.syncType !== null && n.syncType !== undefined && HISTORY_READ.has(n.syncType))
}

export function baileysConfig(config: AlphaSocketConfig): UserFacingSocketConfig {
  return {
    auth: config.auth,
    logger: config.logger,
    getMessage: config.getMessage,
    msgRetryCounterCache: config.msgRetryCounterCache,
    ...(config.version ? { version: config.version } : {}),
    browser: ALPHA_BROWSER,
    // Online-on-connect silences notifications on the user's phone; the gateway should not change how their phone behaves.
    markOnlineOnConnect: false,
    // The gateway does not import full history (not even asked for), and reads only the chunks above of what comes.
    syncFullHistory: false,
    shouldSyncHistoryMessage: shouldSyncHistory,
    // Own sends are not echoed as upserts: the echo goes through the event buffer, and an error ack or receipt that
    // arrives while it is open is merged into the echo instead of coming as `messages.update` (event-buffer.js).
    emitOwnEvents: false,
    shouldIgnoreJid: isIgnoredChat,
  }
}

export const makeAlphaSocket: MakeSocket = (config) => makeWASocket(baileysConfig(config))
