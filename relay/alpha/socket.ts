/**
 * The part of a Baileys socket the driver uses, and the factory that makes one. The real `makeWASocket` is checked
 * against `AlphaSocket` at compile time below; the test fake implements the same type, so the two cannot drift.
 */
import makeWASocket, { Browsers } from '@whiskeysockets/baileys'
import type { Logger } from 'pino'
import type {
  AnyMessageContent,
  AuthenticationState,
  BaileysEventMap,
  BinaryNode,
  Contact,
  MiscMessageGenerationOptions,
  proto,
  ReachoutTimelockState,
  UserFacingSocketConfig,
  WAMessage,
  WAMessageKey,
} from '@whiskeysockets/baileys'

export type AlphaSocket = {
  /** Asks the sender's phone to upload expired media again (Baileys' own; optional so fakes may leave it out). */
  updateMediaMessage?(msg: WAMessage): Promise<WAMessage>
  ev: { process(handler: (events: Partial<BaileysEventMap>) => void | Promise<void>): () => void }
  /** Raw stanzas by Baileys' callback names (`CB:<tag>,<attr>:<value>`) and `frame` for every frame received. */
  ws: { on(event: string, listener: (node: BinaryNode) => void): unknown }
  /** Our own account once known (`creds.me`): `id` is the phone JID with device, `lid` our LID. */
  readonly user: Contact | undefined
  requestPairingCode(phoneNumber: string): Promise<string>
  sendMessage(jid: string, content: AnyMessageContent, options?: MiscMessageGenerationOptions): Promise<WAMessage | undefined>
  fetchAccountReachoutTimelock(): Promise<ReachoutTimelockState>
  logout(msg?: string): Promise<void>
  end(error: Error | undefined): void | Promise<void>
}

export type AlphaSocketConfig = {
  auth: AuthenticationState
  logger: Logger
  /** Baileys asks for a message we sent when the recipient's device needs it re-encrypted (retry receipts). */
  getMessage(key: WAMessageKey): Promise<proto.IMessage | undefined>
}

export type MakeSocket = (config: AlphaSocketConfig) => AlphaSocket

/** A common desktop identity: some accounts reject unusual device names when linking (OpenWA#1666). */
export const ALPHA_BROWSER = Browsers.macOS('Chrome')
export function baileysConfig(config: AlphaSocketConfig): UserFacingSocketConfig {
  return {
    auth: config.auth,
    logger: config.logger,
    getMessage: config.getMessage,
    browser: ALPHA_BROWSER,
    // Online-on-connect silences notifications on the user's phone; the gateway should not change how their phone behaves.
    markOnlineOnConnect: false,
    // The gateway does not import full history; the recent sync still brings chats, contacts and LID mappings.
    syncFullHistory: false,
  }
}

export const makeAlphaSocket: MakeSocket = (config) => makeWASocket(baileysConfig(config))
