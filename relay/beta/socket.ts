/**
 * The GramJS client as the driver sees it: the few library methods it calls, behind one small type so tests can put
 * a scripted fake in its place (test/fixtures/beta-client.ts). `makeGramClient` is the real one: a TelegramClient on
 * a StringSession with the operator's (or the tenant relay's own) API id and hash.
 */
import { Api, TelegramClient } from 'telegram'
import type { CustomFile } from 'telegram/client/uploads'
import { Raw } from 'telegram/events'
import { Logger, LogLevel } from 'telegram/extensions/Logger'
import { StringSession } from 'telegram/sessions'

export type BetaCredentials = { apiId: number; apiHash: string }

export type BetaClient = {
  connect(): Promise<void>
  /** Ends the connection and the update loop for good (TelegramClient.destroy). */
  destroy(): Promise<void>
  /** TelegramClient.invoke: one TL request; RPC errors are thrown as errors.RPCError / errors.FloodWaitError. */
  invoke(request: Api.AnyRequest): Promise<unknown>
  /** TelegramClient._switchDC: moves the (not yet authorized) client to another data center. */
  switchDC(dcId: number): Promise<void>
  /** Every raw update (Raw event builder): messages, read receipts, login tokens, connection state. */
  onUpdate(handler: (update: unknown) => void): void
  sendMessage(peer: Api.InputPeerUser, text: string): Promise<Api.Message>
  /** Only ever a CustomFile holding bytes: a string would be fetched by beta's servers (URL) or opened (path). */
  sendFile(peer: Api.InputPeerUser, file: CustomFile, caption: string): Promise<Api.Message>
  /** The StringSession: "" before an auth key exists. A full account credential; the relay core encrypts it. */
  saveSession(): string
}

export type MakeClient = (session: string) => BetaClient

/** Shown to the user under Devices / Active sessions. */
export const DEVICE_MODEL = 'Messaging gateway'

export function makeGramClient(creds: BetaCredentials): MakeClient {
  return (saved) => {
    const session = new StringSession(saved)
    const client = new TelegramClient(session, creds.apiId, creds.apiHash, {
      connectionRetries: 5,
      // Every flood wait comes back to the driver, which pauses the account visibly (§8) instead of sleeping in a call.
      floodSleepThreshold: 0,
      deviceModel: DEVICE_MODEL,
      systemVersion: 'relay',
      appVersion: '1.0',
      baseLogger: new Logger(LogLevel.ERROR),
    })
    return {
      async connect() {
        await client.connect()
      },
      async destroy() {
        await client.destroy()
      },
      invoke: (request) => client.invoke(request),
      async switchDC(dcId) {
        await client._switchDC(dcId)
      },
      onUpdate(handler) {
        client.addEventHandler(handler, new Raw({}))
      },
      sendMessage: (peer, text) => client.sendMessage(peer, { message: text, parseMode: false, linkPreview: false }),
      sendFile: (peer, file, caption) => client.sendFile(peer, { file, caption, parseMode: false }),
      saveSession: () => session.save(),
    }
  }
}
