/**
 * The fake beta data centre: a TCP server speaking MTProto 2.0 (connection.ts) in front of the simulated beta network
 * (beta-network.ts), so the relay runs the real, unmodified GramJS TelegramClient against it. Auth keys are minted
 * here and handed over in a StringSession (`mintSession`; GramJS pins beta's RSA keys, so no key exchange can be
 * played). Updates reach the connection currently carrying each key's session, never a connection that is gone.
 *
 * Faults, for tests and the control API: `drop` ends connections (all, or one account's), `refuse` stops listening
 * for a while (connects fail with ECONNREFUSED, as with a network outage) and `silence` keeps connections open but
 * answers nothing (a black-holed upstream). Account-level faults (withheld updates, scripted RPC errors,
 * AUTH_KEY_DUPLICATED) live in the network.
 */
import { randomBytes } from 'node:crypto'
import { createServer, type Server, type Socket } from 'node:net'
import type { AddressInfo } from 'node:net'
import type { Api } from 'telegram'
import { readBigIntFromBuffer } from 'telegram/Helpers'
import { StringSession } from 'telegram/sessions'
import type { BetaAccount } from '../beta-account'
import type { SimBetaNetwork } from '../beta-network'
import { DcConnection, type DcHost, type DcKey, type DcStats } from './connection'
import { keyIdOf, mintAuthKey } from './crypto'
import { runRequest, SIM_DC_ID } from './rpc'

/** The port a minted StringSession names: GramJS dials 80 or 443 whatever the session says; the sim routes it (docs/simulator.md). */
const SESSION_PORT = 443

export class BetaDataCentre implements DcHost {
  readonly connections = new Set<DcConnection>()
  readonly stats: DcStats = { badSalts: 0, newSessions: 0, unknownKeys: 0, pushed: 0, pings: 0 }
  private readonly keys = new Map<string, DcKey>()
  private readonly current = new Map<string, DcConnection>()
  private readonly server: Server
  private port = 0
  private refusedUntil = 0
  private silentUntil = 0
  private reopenTimer: NodeJS.Timeout | null = null
  private closed = false

  constructor(
    readonly net: SimBetaNetwork,
    readonly host = '127.0.0.1'
  ) {
    this.server = createServer((socket) => this.accept(socket))
  }

  async listen(port = 0): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject)
      this.server.listen(port, this.host, () => {
        this.server.off('error', reject)
        resolve()
      })
    })
    this.port = (this.server.address() as AddressInfo).port
  }

  get address(): { host: string; port: number } {
    return { host: this.host, port: this.port }
  }

  /**
   * A new auth key on this data centre, as the StringSession a client starts from (dc, address, key). `phone` is the
   * number the client will log in (the simulator ties a QR login to it; beta needs no such hint).
   */
  async mintSession(phone: string | null = null): Promise<string> {
    const authKey = await mintAuthKey()
    const id = keyIdOf(authKey)
    this.keys.set(id, { authKey, id, salt: readBigIntFromBuffer(randomBytes(8), true, true) })
    this.net.openKey(id, phone)
    const session = new StringSession('')
    session.setDC(SIM_DC_ID, this.host, SESSION_PORT)
    session.setAuthKey(authKey)
    return session.save()
  }

  /** Ends connections: every one, or those carrying `account`'s sessions. Answers how many. */
  drop(account: BetaAccount | null = null): number {
    let n = 0
    for (const c of this.connections) {
      const k = c.key ? this.net.keys.get(c.key.id) : undefined
      if (account && k?.userId !== account.userId) continue
      c.close()
      n += 1
    }
    return n
  }

  /** Connections are refused for `ms` (the listener closes; every open connection drops), then accepted again. */
  refuse(ms: number): void {
    this.refusedUntil = Date.now() + ms
    if (this.reopenTimer) clearTimeout(this.reopenTimer)
    if (this.server.listening) this.server.close()
    this.drop()
    this.reopenTimer = setTimeout(() => this.reopen(), ms)
  }

  /** Ends a refusal early. */
  restore(): void {
    this.refusedUntil = 0
    this.silentUntil = 0
    this.reopen()
  }

  /** For `ms`, connections stay open but nothing is answered or pushed. */
  silence(ms: number): void {
    this.silentUntil = Date.now() + ms
  }

  faults(): { refused_seconds: number; silent_seconds: number; connections: number } {
    const left = (t: number) => Math.max(0, Math.ceil((t - Date.now()) / 1000))
    return { refused_seconds: left(this.refusedUntil), silent_seconds: left(this.silentUntil), connections: this.connections.size }
  }

  async close(): Promise<void> {
    this.closed = true
    if (this.reopenTimer) clearTimeout(this.reopenTimer)
    this.drop()
    if (this.server.listening) await new Promise<void>((resolve) => this.server.close(() => resolve()))
  }

  // ── DcHost ───────────────────────────────────────────────────────────────────────────────────────────────────

  key(id: string): DcKey | null {
    return this.keys.get(id) ?? null
  }

  run(key: DcKey, request: Api.AnyRequest) {
    return runRequest(this.net, key.id, request, this.address)
  }

  attach(conn: DcConnection, key: DcKey): void {
    this.current.set(key.id, conn)
    this.net.listen(key.id, (updates) => {
      if (!this.silent()) conn.push(updates)
    })
  }

  detach(conn: DcConnection): void {
    this.connections.delete(conn)
    const id = conn.key?.id
    if (id && this.current.get(id) === conn) {
      this.current.delete(id)
      this.net.listen(id, null)
    }
  }

  silent(): boolean {
    return Date.now() < this.silentUntil
  }

  now(): number {
    return Date.now()
  }

  // ─────────────────────────────────────────────────────────────────────────────────────────────────────────────

  private accept(socket: Socket): void {
    if (this.closed) return void socket.destroy()
    socket.setNoDelay(true)
    this.connections.add(new DcConnection(socket, this))
  }

  private reopen(): void {
    this.reopenTimer = null
    if (this.closed || this.server.listening) return
    this.refusedUntil = 0
    const retry = () => {
      // The port was taken meanwhile (another process): try again shortly; the refusal just lasts longer.
      this.reopenTimer = setTimeout(() => this.reopen(), 100)
    }
    this.server.once('error', retry)
    this.server.listen(this.port, this.host, () => this.server.off('error', retry))
  }
}
