/**
 * The GramJS client as the driver sees it: the few library methods it calls, behind one small type so tests can put
 * a scripted fake in its place (test/fixtures/beta-network.ts) and the simulator its own (relay/sim/beta-client.ts).
 * `makeGramClient` is the real one: a TelegramClient on a StringSession with the operator's (or the tenant relay's
 * own) API id and hash.
 */
import bigInt from 'big-integer'
import { type Api, TelegramClient } from 'telegram'
import { Raw } from 'telegram/events'
import { Logger, LogLevel } from 'telegram/extensions/Logger'
import { StringSession } from 'telegram/sessions'

export type BetaCredentials = { apiId: number; apiHash: string }

/** Where a message's photo or document is fetched from (media-download.ts picks it as GramJS's downloadMedia does). */
export type FileSource = { location: Api.TypeInputFileLocation; dcId: number | undefined }

/** The part size downloads ask for (upload.GetFile's largest). */
export const DOWNLOAD_PART_BYTES = 512 * 1024

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
   * A file from byte `offset` on (a multiple of DOWNLOAD_PART_BYTES), one upload.GetFile part per step as it is read
   * (never whole in memory), ending after the last part. What beta answers for a part (a flood wait among it) is
   * thrown from the iteration, so the caller can go on from the byte it reached.
   */
  downloadMedia(source: FileSource, offset: number): AsyncIterable<Buffer>
  /** The StringSession: "" before an auth key exists. A full account credential; the relay core encrypts it. */
  saveSession(): string
}

/** `account.phone`: the number the client logs in (the simulator ties a QR login to it; GramJS needs no such hint). */
export type MakeClient = (session: string, account: { phone: string }) => BetaClient

/** Shown to the user under Devices / Active sessions. */
export const DEVICE_MODEL = 'Messaging gateway'

export function makeGramClient(creds: BetaCredentials): MakeClient {
  return (saved) => {
    const session = new StringSession(saved)
    const client = new TelegramClient(session, creds.apiId, creds.apiHash, {
      connectionRetries: 5,
      // Every flood wait comes back to the driver, which pauses the account visibly (§8) instead of sleeping in a call;
      // file parts sleep short waits out themselves (part-flood.ts).
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
      // GramJS's own part loop (its data-center senders, FILE_MIGRATE, timeouts), started at the offset reached.
      downloadMedia: (source, offset) =>
        client.iterDownload({ file: source.location, offset: bigInt(offset), requestSize: DOWNLOAD_PART_BYTES, dcId: source.dcId }),
      saveSession: () => session.save(),
    }
  }
}
