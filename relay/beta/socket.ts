/**
 * The GramJS client as the driver sees it: the few library methods it calls, behind one small type so the driver's
 * unit tests can put a scripted fake in its place (test/fixtures/beta-network.ts). `makeGramClient` is the real one, in
 * production and in the simulator alike: a TelegramClient on a StringSession with the operator's (or the tenant
 * relay's own) API id and hash.
 */
import { PassThrough } from 'node:stream'
import { type Api, TelegramClient } from 'telegram'
import type { TelegramClientParams } from 'telegram/client/telegramBaseClient'
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
  /**
   * `ref` is the gateway's message id. beta has no field for it and GramJS ignores it; the simulator's outbox names
   * the gateway message by it (docs/simulator.md).
   */
  sendMessage(peer: Api.InputPeerUser, text: string, ref?: string): Promise<Api.Message>
  /** Only ever a CustomFile holding bytes: a string would be fetched by beta's servers (URL) or opened (path). */
  sendFile(peer: Api.InputPeerUser, file: CustomFile, caption: string, ref?: string): Promise<Api.Message>
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

/**
 * How the client reaches beta; production passes nothing. The simulator (relay/sim/driver.ts) passes both: its fake
 * data centre cannot take part in a key exchange (GramJS pins beta's RSA keys), so a new login starts from a session
 * the data centre minted, and the socket dials that data centre.
 */
export type GramOptions = {
  /** A new login starts from this session (an auth key already issued) instead of a key exchange. */
  initialSession?(account: { phone: string }): Promise<string>
  /** The socket class GramJS connects with. */
  networkSocket?: TelegramClientParams['networkSocket']
}

export function makeGramClient(creds: BetaCredentials, options: GramOptions = {}): MakeClient {
  return (saved, account) => {
    const session = new StringSession(saved)
    const client = new TelegramClient(session, creds.apiId, creds.apiHash, {
      connectionRetries: 5,
      // Every flood wait comes back to the driver, which pauses the account visibly (§8) instead of sleeping in a call.
      floodSleepThreshold: 0,
      deviceModel: DEVICE_MODEL,
      systemVersion: 'relay',
      appVersion: '1.0',
      baseLogger: new Logger(LogLevel.ERROR),
      ...(options.networkSocket ? { networkSocket: options.networkSocket } : {}),
    })
    return {
      async connect() {
        if (!saved && options.initialSession) {
          const minted = new StringSession(await options.initialSession(account))
          await minted.load()
          session.setDC(minted.dcId, minted.serverAddress, minted.port)
          session.setAuthKey(minted.getAuthKey())
        }
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
      downloadMedia: async (message) => streamDownload((outputFile) => client.downloadMedia(message, { outputFile })),
      saveSession: () => session.save(),
    }
  }
}
