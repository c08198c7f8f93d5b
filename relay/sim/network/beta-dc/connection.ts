/**
 * One client TCP connection to the fake data centre, speaking MTProto 2.0 as beta's servers do: packets under an auth
 * key the data centre knows (an unknown key is answered with the transport error -404 and the connection closed),
 * msg_id checked against the clock (bad_msg_notification 16/17/18), the server salt checked on every message
 * (bad_server_salt, after which the client resends), new_session_created when a client starts a session, acks for
 * what it asked, pong for its pings (ping_delay_disconnect closes the connection when the next ping is late), every
 * answer an rpc_result (gzip_packed when large), answers and acks leaving together in a msg_container, and updates
 * pushed as their own messages while the connection is the key's current one. Requests run one at a time, in order.
 */
import type { Socket } from 'node:net'
import bigInt from 'big-integer'
import { Api } from 'telegram'
import type { AuthKey } from 'telegram/crypto/AuthKey'
import { BinaryReader } from 'telegram/extensions'
import { generateRandomLong } from 'telegram/Helpers'
import { GZIPPacked, MessageContainer, TLMessage } from 'telegram/tl/core'
import { decryptFromClient, encryptForClient, packetKeyId } from './crypto'
import { PacketStream, TransportError } from './transport'
import { container, maybeGzip, rpcResult, tlBytes, type OutMessage } from './wire'
import { isRequest, type RpcOutcome } from './rpc'

/** A key the data centre issued: the library's AuthKey, the network's key id and the salt messages must carry. */
export type DcKey = { authKey: AuthKey; id: string; salt: bigInt.BigInteger }

/** What a connection needs from its data centre. */
export type DcHost = {
  key(id: string): DcKey | null
  run(key: DcKey, request: Api.AnyRequest): Promise<RpcOutcome>
  /** The connection now carries the key's session: updates for the key come here until another takes over. */
  attach(conn: DcConnection, key: DcKey): void
  detach(conn: DcConnection): void
  /** While set, packets are read and dropped without an answer (a black-holed upstream). */
  silent(): boolean
  now(): number
  /** What the data centre said besides answers, counted (tests check the client met each). */
  readonly stats: DcStats
}

export type DcStats = { badSalts: number; newSessions: number; unknownKeys: number; pushed: number; pings: number }

/** How far a client's msg_id may be from the server's clock (core.telegram.org/mtproto/description#message-identifier-msg-id). */
const MSG_ID_PAST_S = 300
const MSG_ID_FUTURE_S = 30

type Incoming = { msgId: bigInt.BigInteger; seqNo: number; obj: unknown }
type Pending = { body: Buffer; contentRelated: boolean; response: boolean }

export class DcConnection {
  key: DcKey | null = null
  private readonly stream = new PacketStream()
  private sessionId: bigInt.BigInteger | null = null
  private readonly seen = new Set<string>()
  private serverSeq = 0
  private lastMsgId = bigInt.zero
  private queue: Promise<void> = Promise.resolve()
  private pingTimer: NodeJS.Timeout | null = null
  private closed = false

  constructor(
    readonly socket: Socket,
    private readonly dc: DcHost
  ) {
    socket.on('data', (chunk) => this.onData(chunk))
    socket.on('close', () => this.onClose())
    socket.on('error', () => socket.destroy())
  }

  close(): void {
    if (!this.closed) this.socket.destroy()
  }

  /** An update for the key's account, as a message of its own (not an answer). */
  push(updates: Api.TypeUpdates): void {
    if (this.closed || !this.key || !this.sessionId) return
    const key = this.key
    this.dc.stats.pushed += 1
    this.queue = this.queue.then(() => this.send(key, [{ body: maybeGzip(tlBytes(updates)), contentRelated: true, response: false }]))
  }

  private onData(chunk: Buffer): void {
    let packets: Buffer[]
    try {
      packets = this.stream.push(chunk)
    } catch (err) {
      if (!(err instanceof TransportError)) throw err
      this.close()
      return
    }
    for (const p of packets) this.queue = this.queue.then(() => this.onPacket(p)).catch(() => this.close())
  }

  private onClose(): void {
    this.closed = true
    if (this.pingTimer) clearTimeout(this.pingTimer)
    this.dc.detach(this)
  }

  private async onPacket(packet: Buffer): Promise<void> {
    if (this.closed || this.dc.silent()) return
    const keyId = packetKeyId(packet)
    // auth_key_id 0 starts a key exchange, which cannot be played (GramJS pins beta's RSA keys): keys are minted.
    const key = keyId && keyId !== '0' ? this.dc.key(keyId) : null
    if (!key || (this.key && this.key !== key)) {
      this.dc.stats.unknownKeys += 1
      return this.transportError(404)
    }
    const plain = await decryptFromClient(key.authKey, packet)
    if (!plain) return
    this.key = key
    const service: Pending[] = []
    const answers: Pending[] = []
    const msgKey = plain.msgId.toString()
    if (this.seen.has(msgKey)) return
    const bad = this.msgIdError(plain.msgId)
    if (bad)
      return this.send(key, [this.service(new Api.BadMsgNotification({ badMsgId: plain.msgId, badMsgSeqno: plain.seqNo, errorCode: bad }))], plain.sessionId)
    if (!plain.salt.equals(key.salt)) {
      this.dc.stats.badSalts += 1
      const salt = new Api.BadServerSalt({ badMsgId: plain.msgId, badMsgSeqno: plain.seqNo, errorCode: 48, newServerSalt: key.salt })
      return this.send(key, [this.service(salt)], plain.sessionId)
    }
    this.remember(msgKey)
    if (!this.sessionId?.equals(plain.sessionId)) {
      this.sessionId = plain.sessionId
      this.dc.stats.newSessions += 1
      service.push(this.service(new Api.NewSessionCreated({ firstMsgId: plain.msgId, uniqueId: generateRandomLong(), serverSalt: key.salt })))
      this.dc.attach(this, key)
    }
    const obj: unknown = await new BinaryReader(plain.body).tgReadObject()
    const acks: bigInt.BigInteger[] = []
    for (const m of await this.flatten({ msgId: plain.msgId, seqNo: plain.seqNo, obj })) {
      if (m.seqNo % 2 === 1) acks.push(m.msgId)
      answers.push(...(await this.handle(key, m)))
    }
    if (acks.length > 0) service.unshift(this.service(new Api.MsgsAck({ msgIds: acks })))
    // Service messages ride in a container with the first answer; every further answer goes on its own, as beta
    // sends them. (GramJS stops reading a container at an rpc_error in it: the answers after it would be lost.)
    const [first, ...rest] = answers
    if (service.length > 0 || first) await this.send(key, first ? [...service, first] : service)
    for (const a of rest) await this.send(key, [a])
  }

  /** The messages inside containers and gzip_packed, in order. */
  private async flatten(m: Incoming): Promise<Incoming[]> {
    if (m.obj instanceof MessageContainer) {
      const all: Incoming[] = []
      // GramJS declares the parsed messages and their seq_no private; they are its TLMessage objects.
      const messages: unknown = Reflect.get(m.obj, 'messages')
      for (const inner of Array.isArray(messages) ? messages : []) {
        if (!(inner instanceof TLMessage)) continue
        if (this.seen.has(inner.msgId.toString())) continue
        this.remember(inner.msgId.toString())
        const seqNo: unknown = Reflect.get(inner, 'seqNo')
        all.push(...(await this.flatten({ msgId: inner.msgId, seqNo: typeof seqNo === 'number' ? seqNo : 0, obj: await inner.obj })))
      }
      return all
    }
    if (m.obj instanceof GZIPPacked) return this.flatten({ ...m, obj: await new BinaryReader(m.obj.data).tgReadObject() })
    return [m]
  }

  private async handle(key: DcKey, m: Incoming): Promise<Pending[]> {
    const obj = m.obj
    if (obj instanceof Api.MsgsAck) return []
    if (obj instanceof Api.PingDelayDisconnect || obj instanceof Api.Ping) {
      this.dc.stats.pings += 1
      if (obj instanceof Api.PingDelayDisconnect) this.armDisconnect(obj.disconnectDelay)
      return [{ body: tlBytes(new Api.Pong({ msgId: m.msgId, pingId: obj.pingId })), contentRelated: true, response: true }]
    }
    if (obj instanceof Api.DestroySession) return [this.service(new Api.DestroySessionOk({ sessionId: obj.sessionId }), true)]
    if (!isRequest(obj)) return []
    const outcome = await this.dc.run(key, obj)
    return [{ body: rpcResult(m.msgId, outcome), contentRelated: true, response: true }]
  }

  private service(obj: { getBytes(): Buffer }, response = false): Pending {
    return { body: tlBytes(obj), contentRelated: false, response }
  }

  /** ping_delay_disconnect: the server closes the connection if no ping follows within `delayS` seconds. */
  private armDisconnect(delayS: number): void {
    if (this.pingTimer) clearTimeout(this.pingTimer)
    this.pingTimer = setTimeout(() => this.close(), delayS * 1000)
    this.pingTimer.unref()
  }

  private msgIdError(msgId: bigInt.BigInteger): number | null {
    if (!msgId.mod(4).isZero()) return 18
    const sent = msgId.shiftRight(32).toJSNumber()
    const now = this.dc.now() / 1000
    if (sent < now - MSG_ID_PAST_S) return 16
    if (sent > now + MSG_ID_FUTURE_S) return 17
    return null
  }

  private remember(id: string): void {
    this.seen.add(id)
    if (this.seen.size > 2000) this.seen.delete(this.seen.values().next().value!)
  }

  /** A server msg_id: the clock in the high half, strictly increasing, ≡ 1 (mod 4) for answers and 3 otherwise. */
  private nextMsgId(response: boolean): bigInt.BigInteger {
    const now = this.dc.now()
    let id = bigInt(Math.floor(now / 1000))
      .shiftLeft(32)
      .add(bigInt(now % 1000).multiply(4_294_967))
    if (id.lesserOrEquals(this.lastMsgId)) id = this.lastMsgId.add(1)
    id = id.subtract(id.mod(4)).add(response ? 1 : 3)
    if (id.lesserOrEquals(this.lastMsgId)) id = id.add(4)
    this.lastMsgId = id
    return id
  }

  private nextSeqNo(contentRelated: boolean): number {
    if (!contentRelated) return this.serverSeq * 2
    this.serverSeq += 1
    return this.serverSeq * 2 - 1
  }

  private async send(key: DcKey, pending: Pending[], sessionId = this.sessionId ?? bigInt.zero): Promise<void> {
    if (this.closed) return
    const messages: OutMessage[] = pending.map((p) => ({ msgId: this.nextMsgId(p.response), seqNo: this.nextSeqNo(p.contentRelated), body: p.body }))
    const one = messages.length === 1 ? messages[0]! : { msgId: this.nextMsgId(false), seqNo: this.nextSeqNo(false), body: container(messages) }
    const packet = await encryptForClient(key.authKey, { salt: key.salt, sessionId, msgId: one.msgId, seqNo: one.seqNo }, one.body)
    if (!this.closed) this.socket.write(this.stream.encode(packet))
  }

  /** A transport error (-404: no such auth key), then the connection ends, as beta does. */
  private transportError(code: number): void {
    const body = Buffer.alloc(4)
    body.writeInt32LE(-code, 0)
    try {
      this.socket.end(this.stream.encode(body))
    } catch {
      this.close()
    }
  }
}
