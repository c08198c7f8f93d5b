/**
 * The GramJS client as the driver sees it: the few library methods it calls, behind one small type so the driver's
 * unit tests can put a scripted fake in its place (test/fixtures/beta-network.ts). `makeGramClient` is the real one, in
 * production and in the simulator alike: a TelegramClient on a StringSession with the operator's (or the tenant
 * relay's own) API id and hash.
 *
 * What it adds to the library, because the library alone can wedge (node_modules/telegram, issue 21):
 * - a deadline on every call, and on connecting: GramJS has none (a request on a dead sender waits forever);
 * - calls wait for a connected client before they are handed to GramJS, so a call abandoned at its deadline was never
 *   queued in a client that might still send it later;
 * - `link()`, the library's own view of its connection (connected, still reconnecting, or given up: after
 *   CONNECTION_RETRIES failed attempts `MTProtoSender` stops for good and every later call would hang), and
 *   `rebuild()`, a new TelegramClient on the same session, which the driver's health loop uses once it gave up;
 * - every Updates container the session receives, pushed or answering a call, with its seq and date intact (GramJS's
 *   event handlers get the updates one by one without them), through the session's `processEntities` hook, which
 *   the library calls for both.
 */
import bigInt from 'big-integer'
import { Api, TelegramClient } from 'telegram'
import type { TelegramClientParams } from 'telegram/client/telegramBaseClient'
import { Logger, LogLevel } from 'telegram/extensions/Logger'
import { UpdateConnectionState } from 'telegram/network'
import { StringSession } from 'telegram/sessions'
import { BetaLinkDownError, withDeadline } from './deadlines'
// Installs Node's 64-bit integer reader and writer in GramJS at import, before any client reads a byte (tl-longs.ts).
import './tl-longs'

export type BetaCredentials = { apiId: number; apiHash: string }

/** Where a message's photo or document is fetched from (media-download.ts picks it as GramJS's downloadMedia does). */
export type FileSource = { location: Api.TypeInputFileLocation; dcId: number | undefined }

/** The part size downloads ask for (upload.GetFile's largest). */
export const DOWNLOAD_PART_BYTES = 512 * 1024

/** connected: calls go out; reconnecting: GramJS is retrying and will send what is queued; down: GramJS gave up. */
export type LinkState = 'connected' | 'reconnecting' | 'down'
/** What GramJS reports about its connection (UpdateConnectionState); broken: the server forgot the auth key (-404). */
export type LinkEvent = 'connected' | 'disconnected' | 'broken'

export type BetaClient = {
  /** Connects (a new login first takes its initial session); rejects when GramJS gives up or the deadline passes. */
  connect(): Promise<void>
  /** A new TelegramClient on the same session, connected; calls pending on the old one fail at once. */
  rebuild(): Promise<void>
  /** Ends the connection and the update loop for good (TelegramClient.destroy). */
  destroy(): Promise<void>
  link(): LinkState
  /**
   * TelegramClient.invoke with a deadline: RPC errors are thrown as errors.RPCError / errors.FloodWaitError, a missed
   * deadline as BetaTimeoutError, a call while GramJS gave up as BetaLinkDownError. `ref` names the gateway message a
   * send is for: GramJS ignores it, the driver's unit-test fake names the message by it.
   */
  invoke(request: Api.AnyRequest, ref?: string, opts?: { timeoutMs?: number }): Promise<unknown>
  /** TelegramClient._switchDC: moves the (not yet authorized) client to another data center. */
  switchDC(dcId: number): Promise<void>
  /** Every Updates container the session receives, in the order received (pushed, or the answer to a call). */
  onUpdates(handler: (updates: Api.TypeUpdates) => void): void
  onLink(handler: (event: LinkEvent) => void): void
  /**
   * A file from byte `offset` on (a multiple of DOWNLOAD_PART_BYTES), one upload.GetFile part per step as it is read
   * (never whole in memory), ending after the last part. What beta answers for a part (a flood wait among it) is
   * thrown from the iteration, so the caller can go on from the byte it reached; a part that does not come within the
   * call deadline is thrown as BetaTimeoutError.
   */
  downloadMedia(source: FileSource, offset: number): AsyncIterable<Buffer>
  /** The StringSession: "" before an auth key exists. A full account credential; the relay core encrypts it. */
  saveSession(): string
}

/** `account.phone`: the number the client logs in (the simulator ties a QR login to it; GramJS needs no such hint). */
export type MakeClient = (session: string, account: { phone: string }) => BetaClient

export type ClientTiming = {
  /** Every call, and every download part. */
  invokeTimeoutMs: number
  /** Connecting (GramJS's own attempts included). */
  connectTimeoutMs: number
  /** GramJS's pause between its connection attempts (its `retryDelay`). */
  retryDelayMs: number
}
export const CLIENT_TIMING: ClientTiming = { invokeTimeoutMs: 30_000, connectTimeoutMs: 30_000, retryDelayMs: 1_000 }
/**
 * GramJS's connection attempts, at start and on each reconnect, before it gives up. Finite on purpose: a client that
 * gave up is a clean state the driver can see (`link()`: down) and replace; with Infinity a destroyed client's retry
 * loop would live on and could send what it still held once the network came back.
 */
export const CONNECTION_RETRIES = 5
/** How long closing a client may take before it is left to finish on its own. */
const DESTROY_TIMEOUT_MS = 5_000

/** Shown to the user under Devices / Active sessions. */
export const DEVICE_MODEL = 'Messaging gateway'

/**
 * How the client reaches beta; production passes nothing but may tune the deadlines. The simulator
 * (relay/sim/driver.ts) passes `initialSession` and `networkSocket`: its fake data centre cannot take part in a key
 * exchange (GramJS pins beta's RSA keys), so a new login starts from a session the data centre minted, and the socket
 * dials that data centre.
 */
export type GramOptions = {
  /** A new login starts from this session (an auth key already issued) instead of a key exchange. */
  initialSession?(account: { phone: string }): Promise<string>
  /** The socket class GramJS connects with. */
  networkSocket?: TelegramClientParams['networkSocket']
  timing?: Partial<ClientTiming>
}

function isUpdates(x: unknown): x is Api.TypeUpdates {
  return (
    x instanceof Api.Updates ||
    x instanceof Api.UpdatesCombined ||
    x instanceof Api.UpdateShort ||
    x instanceof Api.UpdateShortMessage ||
    x instanceof Api.UpdateShortChatMessage ||
    x instanceof Api.UpdateShortSentMessage ||
    x instanceof Api.UpdatesTooLong
  )
}

const LINK_EVENTS: Record<number, LinkEvent> = {
  [UpdateConnectionState.connected]: 'connected',
  [UpdateConnectionState.disconnected]: 'disconnected',
  [UpdateConnectionState.broken]: 'broken',
}

/** A StringSession that also hands every object GramJS files through it (updates, call results) to `observe`. */
class ObservedSession extends StringSession {
  constructor(
    session: string,
    private readonly observe: (tlo: unknown) => void
  ) {
    super(session)
  }
  override processEntities(tlo: unknown): void {
    super.processEntities(tlo)
    this.observe(tlo)
  }
}

type Generation = {
  client: TelegramClient
  session: ObservedSession
  /** Resolves once this client's connect() succeeded; rejects when it failed. */
  ready: Promise<TelegramClient>
  /** Calls waiting on or running in this client, failed at once when it is replaced. */
  calls: Set<(err: Error) => void>
  /**
   * The server forgot the auth key (-404): GramJS stops reading on its main connection and never reconnects by itself,
   * so the link counts as down and the driver builds a new client (which asks again, with backoff).
   */
  broken: boolean
  refuse(err: Error): void
}

class GramLink implements BetaClient {
  private session: string
  private gen: Generation | null = null
  private destroyed = false
  private readonly updateHandlers: Array<(u: Api.TypeUpdates) => void> = []
  private readonly linkHandlers: Array<(e: LinkEvent) => void> = []

  constructor(
    private readonly creds: BetaCredentials,
    private readonly options: GramOptions,
    private readonly timing: ClientTiming,
    saved: string,
    private readonly account: { phone: string }
  ) {
    this.session = saved
  }

  async connect(): Promise<void> {
    if (this.destroyed) throw new BetaLinkDownError('beta: connect after destroy')
    if (!this.session && this.options.initialSession) this.session = await this.options.initialSession(this.account)
    const gen = this.open()
    await gen.ready
  }

  async rebuild(): Promise<void> {
    const old = this.gen
    if (old) this.session = old.session.save() || this.session
    this.gen = null
    if (old) this.retire(old)
    await this.connect()
  }

  async destroy(): Promise<void> {
    this.destroyed = true
    const old = this.gen
    this.gen = null
    if (old) await this.retire(old)
  }

  link(): LinkState {
    const sender = this.gen?.client._sender
    if (!sender || this.gen?.broken) return this.gen && !this.gen.broken ? 'reconnecting' : 'down'
    if (sender._userConnected && !sender.isReconnecting) return 'connected'
    if (sender.isReconnecting || sender.isConnecting) return 'reconnecting'
    return 'down'
  }

  invoke(request: Api.AnyRequest, _ref?: string, opts: { timeoutMs?: number } = {}): Promise<unknown> {
    return this.call((c) => c.invoke(request), opts.timeoutMs ?? this.timing.invokeTimeoutMs, request.className)
  }

  switchDC(dcId: number): Promise<void> {
    return this.call(async (c) => void (await c._switchDC(dcId)), this.timing.connectTimeoutMs, `switching to DC ${dcId}`)
  }

  onUpdates(handler: (updates: Api.TypeUpdates) => void): void {
    this.updateHandlers.push(handler)
  }

  onLink(handler: (event: LinkEvent) => void): void {
    this.linkHandlers.push(handler)
  }

  downloadMedia(source: FileSource, offset: number): AsyncIterable<Buffer> {
    const partMs = this.timing.invokeTimeoutMs
    const gen = this.gen
    const connected = (g: Generation) => this.connected(g, partMs)
    return {
      async *[Symbol.asyncIterator]() {
        if (!gen) throw new BetaLinkDownError('beta: the client is not connected')
        const c = await connected(gen)
        // GramJS's own part loop (its data-center senders, FILE_MIGRATE), started at the offset reached.
        const parts = c.iterDownload({ file: source.location, offset: bigInt(offset), requestSize: DOWNLOAD_PART_BYTES, dcId: source.dcId })
        const it = parts[Symbol.asyncIterator]()
        for (;;) {
          const next = await withDeadline(it.next(), partMs, 'a download part')
          if (next.done) return
          yield next.value
        }
      },
    }
  }

  saveSession(): string {
    return this.gen?.session.save() || this.session
  }

  // ─────────────────────────────────────────────────────────────────────────────────────────────────────────────

  private open(): Generation {
    const session = new ObservedSession(this.session, (tlo) => this.observe(gen, tlo))
    const client = new TelegramClient(session, this.creds.apiId, this.creds.apiHash, {
      connectionRetries: CONNECTION_RETRIES,
      retryDelay: this.timing.retryDelayMs,
      // Every flood wait comes back to the driver, which pauses the account visibly (§8) instead of sleeping in a call.
      floodSleepThreshold: 0,
      deviceModel: DEVICE_MODEL,
      systemVersion: 'relay',
      appVersion: '1.0',
      baseLogger: new Logger(LogLevel.ERROR),
      ...(this.options.networkSocket ? { networkSocket: this.options.networkSocket } : {}),
    })
    const connecting = withDeadline(client.connect(), this.timing.connectTimeoutMs, 'connecting').then((ok) => {
      if (!ok) throw new BetaLinkDownError(`beta: GramJS gave up connecting after ${CONNECTION_RETRIES} attempts`)
      return client
    })
    let refuse: (err: Error) => void = () => undefined
    // A -404 while connecting fails the connect now (GramJS would wait for an answer that never comes).
    const refused = new Promise<never>((_, reject) => {
      refuse = reject
    })
    const ready = Promise.race([connecting, refused])
    const gen: Generation = { client, session, ready, calls: new Set(), broken: false, refuse }
    ready.catch(() => undefined)
    this.gen = gen
    return gen
  }

  /** The old client is closed; what waits on it fails now (it can never answer), and nothing it held is sent. */
  private async retire(gen: Generation): Promise<void> {
    const gone = new BetaLinkDownError('beta: the client was replaced')
    for (const fail of gen.calls) fail(gone)
    gen.calls.clear()
    await withDeadline(gen.client.destroy(), DESTROY_TIMEOUT_MS, 'closing the client').catch(() => undefined)
  }

  private observe(gen: Generation, tlo: unknown): void {
    if (gen !== this.gen) return
    if (tlo instanceof UpdateConnectionState) {
      const event = LINK_EVENTS[tlo.state]
      if (event === 'broken') {
        gen.broken = true
        gen.refuse(new BetaLinkDownError('beta: the data center does not know this auth key (-404)'))
      }
      if (event) for (const h of this.linkHandlers) h(event)
      return
    }
    if (isUpdates(tlo)) for (const h of this.updateHandlers) h(tlo)
  }

  /** The current client once connected; fails at the deadline, or at once when GramJS gave up or the client went. */
  private async connected(gen: Generation, ms: number): Promise<TelegramClient> {
    const client = await withDeadline(gen.ready, ms, 'waiting for the connection')
    if (gen !== this.gen) throw new BetaLinkDownError('beta: the client was replaced')
    if (this.link() === 'down') throw new BetaLinkDownError('beta: GramJS gave up reconnecting')
    return client
  }

  private call<T>(run: (c: TelegramClient) => Promise<T>, ms: number, what: string): Promise<T> {
    const gen = this.gen
    if (!gen || this.destroyed) return Promise.reject(new BetaLinkDownError('beta: the client is not connected'))
    return new Promise<T>((resolve, reject) => {
      gen.calls.add(reject)
      const started = Date.now()
      this.connected(gen, ms)
        .then((c) => withDeadline(run(c), Math.max(1, ms - (Date.now() - started)), what))
        .then(resolve, reject)
        .finally(() => gen.calls.delete(reject))
    })
  }
}

export function makeGramClient(creds: BetaCredentials, options: GramOptions = {}): MakeClient {
  const timing = { ...CLIENT_TIMING, ...options.timing }
  return (saved, account) => new GramLink(creds, options, timing, saved, account)
}
