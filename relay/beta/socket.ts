/**
 * The GramJS client as the driver sees it: the few library methods it calls, behind one small type so tests can put
 * a scripted fake in its place (test/fixtures/beta-network.ts) and the simulator its own (relay/sim/beta-client.ts).
 * `makeGramClient` is the real one: a TelegramClient on a StringSession with the operator's (or the tenant relay's
 * own) API id and hash.
 */
import { PassThrough } from 'node:stream'
import { type Api, TelegramClient } from 'telegram'
import { Raw } from 'telegram/events'
import { Logger, LogLevel } from 'telegram/extensions/Logger'
import { StringSession } from 'telegram/sessions'

export type BetaCredentials = { apiId: number; apiHash: string }

export type BetaClient = {
  connect(): Promise<void>
  /** Ends the connection and the update loop for good (TelegramClient.destroy). */
  destroy(): Promise<void>
  /**
   * TelegramClient.invoke: one TL request; RPC errors are thrown as errors.RPCError / errors.FloodWaitError. `ref`
   * names the gateway message a send is for: GramJS ignores it, the simulator's outbox names the message by it
   * (docs/simulator.md).
   */
  invoke(request: Api.AnyRequest, ref?: string): Promise<unknown>
  /** TelegramClient._switchDC: moves the (not yet authorized) client to another data center. */
  switchDC(dcId: number): Promise<void>
  /** Every raw update (Raw event builder): messages, read receipts, login tokens, connection state. */
  onUpdate(handler: (update: unknown) => void): void
  /**
   * The message's photo or document as a stream, fetched part by part as the stream is read (never whole in
   * memory). It ends only when every part arrived; a failed download errors the stream instead of ending it short.
   */
  downloadMedia(message: Api.Message): Promise<NodeJS.ReadableStream>
  /** The StringSession: "" before an auth key exists. A full account credential; the relay core encrypts it. */
  saveSession(): string
}

/** `account.phone`: the number the client logs in (the simulator ties a QR login to it; GramJS needs no such hint). */
export type MakeClient = (session: string, account: { phone: string }) => BetaClient

/**
 * GramJS writes a download into any `{write, close}` object, awaiting each write: a PassThrough fed that way keeps
 * its pace to the reader's. GramJS calls `close` on failure too, so the stream ends only when the download resolved.
 */
export function streamDownload(download: (writer: { write(chunk: Buffer): Promise<void>; close(): void }) => Promise<unknown>): NodeJS.ReadableStream {
  const out = new PassThrough()
  const writer = {
    write: (chunk: Buffer) =>
      new Promise<void>((resolve, reject) => {
        if (out.destroyed) return reject(new Error('the reader went away'))
        if (out.write(chunk)) return resolve()
        out.once('drain', resolve)
      }),
    close: () => undefined,
  }
  download(writer).then(
    () => out.end(),
    (err: unknown) => out.destroy(err instanceof Error ? err : new Error(String(err)))
  )
  return out
}

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
      downloadMedia: async (message) => streamDownload((outputFile) => client.downloadMedia(message, { outputFile })),
      saveSession: () => session.save(),
    }
  }
}
