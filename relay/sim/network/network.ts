/**
 * The simulated upstream network: phones, their linked devices and contacts. It behaves like the real service
 * where the gateway depends on it: QR refs that rotate and run out, a one-time pairing code, a restart after
 * pairing, an offline backlog delivered on every login until the device acknowledges it (which the device does as it
 * receives each message, as a linked alpha device sends its delivery receipt: what was acknowledged is never sent
 * again), the end of that backlog announced (`offline`), a second session with the same credentials replacing the
 * first, logout and ban closing the session with the upstream's codes, and a dropped connection.
 */
import { randomBytes } from 'node:crypto'
import { DEFAULT_BETA_TIMING, SIM_BETA_CREDS, SimBetaNetwork, type BetaTiming } from './beta-network'
import { onChatAction, timelocked } from './chat-actions'
import type { ClientMsg, SimMedia } from './protocol'
import { SIM_CLOSE } from './protocol'
import { pairingCode, SimPhone, upstreamMessageId, type Conn, type SimContact } from './phone'

export type SimTiming = {
  /** Life of the first QR ref, then of each next one, and how many refs a link attempt gets. */
  firstQrMs: number
  nextQrMs: number
  qrRefs: number
  /** How long after a login's backlog the network says it is through (a large backlog drains over a while). */
  offlineEndMs: number
}

/** The real service's values: 60 s for the first code, 20 s for each next one, 6 codes. */
export const DEFAULT_SIM_TIMING: SimTiming = { firstQrMs: 60_000, nextQrMs: 20_000, qrRefs: 6, offlineEndMs: 0 }

export class SimError extends Error {
  constructor(
    readonly status: number,
    message: string
  ) {
    super(message)
  }
}

/** An attachment a contact sent, as `/sim/alpha/{phone}/inbound` takes it. */
export type SimAttachment = { contentType: string; fileName: string | null; bytes: Buffer; voiceNote: boolean }

export class SimNetwork {
  private readonly phones = new Map<string, SimPhone>()
  /** The network's media server: attachments by id, served at GET /sim/media/{id} (server.ts). */
  readonly mediaFiles = new Map<string, SimAttachment>()
  /** The origin the media server answers on; set by the server once it listens. */
  mediaOrigin = ''

  /** beta's side of the network (beta-network.ts), reached through its fake data centre (beta-dc/) and the control API. */
  readonly beta: SimBetaNetwork

  constructor(
    readonly timing: SimTiming = DEFAULT_SIM_TIMING,
    betaTiming: BetaTiming = DEFAULT_BETA_TIMING
  ) {
    this.beta = new SimBetaNetwork({ creds: SIM_BETA_CREDS, timing: betaTiming, autoRegister: true })
  }

  /** Who is on the network (`onWhatsApp`): every simulated phone, everyone who wrote to one, every address-book entry. */
  isRegistered(number: string): boolean {
    const e164 = number.startsWith('+') ? number : `+${number}`
    if (this.phones.has(e164) || this.writers.has(e164)) return true
    return this.all().some((p) => p.addressBook.some((c) => c.phone === e164))
  }

  /** Numbers that wrote to a simulated phone: they are on the network. */
  private readonly writers = new Set<string>()

  phone(number: string): SimPhone {
    let p = this.phones.get(number)
    if (!p) {
      p = new SimPhone(number)
      this.phones.set(number, p)
    }
    return p
  }

  known(number: string): SimPhone {
    const p = this.phones.get(number)
    if (!p) throw new SimError(404, `no phone ${number} on the simulated network yet (connect it through the gateway first)`)
    return p
  }

  all(): SimPhone[] {
    return [...this.phones.values()]
  }

  // ── device side ──────────────────────────────────────────────────────────────────────────────────────────────

  /** A device message; answers the phone it is bound to after a login. */
  onDevice(conn: Conn, bound: SimPhone | null, msg: ClientMsg): SimPhone | null {
    if (msg.t === 'login') return this.login(conn, msg.phone, msg.device)
    if (!bound) {
      conn.close(4400, 'login first')
      return null
    }
    switch (msg.t) {
      case 'pairing_code': {
        const link = bound.link
        if (!link || link.conn !== conn) return bound
        link.pairingCode ??= pairingCode()
        conn.send({ t: 'pairing_code', code: link.pairingCode, expiresAt: link.windowEndsAt })
        return bound
      }
      case 'ack':
        for (const id of msg.ids) {
          bound.backlog.delete(id)
          bound.receipts.delete(id)
          bound.reactions.delete(id)
        }
        return bound
      case 'react':
      case 'presence':
      case 'read':
      case 'lookup':
        onChatAction(conn, bound, msg, this)
        return bound
      case 'send':
        this.deviceSend(conn, bound, msg)
        return bound
      case 'logout':
        this.logout(bound)
        return bound
    }
  }

  onClose(conn: Conn, bound: SimPhone | null): void {
    if (!bound) return
    bound.open.delete(conn)
    if (bound.link?.conn === conn) bound.endLink()
  }

  private login(conn: Conn, number: string, device: { id: string; secret: string } | null): SimPhone | null {
    const p = this.phone(number)
    p.logins++
    if (p.banned) {
      conn.close(SIM_CLOSE.BANNED, 'this number is banned')
      return null
    }
    if (device) {
      if (!p.device || p.device.id !== device.id || p.device.secret !== device.secret) {
        conn.close(SIM_CLOSE.LOGGED_OUT, 'this device is not linked (logged out)')
        return null
      }
      // A second live session with the same credentials replaces the first, as the real service does.
      for (const old of p.open) old.close(SIM_CLOSE.REPLACED, 'replaced by a new session')
      p.open.add(conn)
      p.maxConcurrent = Math.max(p.maxConcurrent, p.open.size)
      conn.send({ t: 'open', me: { phone: p.phone, lid: p.lid } })
      if (!p.contactsDelivered && p.addressBook.length > 0) {
        conn.send({ t: 'contacts', contacts: p.addressBook })
        p.contactsDelivered = true
      }
      for (const m of p.backlog.values()) conn.send({ ...m, offline: true })
      for (const r of p.receipts.values()) conn.send({ ...r, offline: true })
      for (const r of p.reactions.values()) conn.send({ ...r, offline: true })
      if (p.timelock) conn.send({ t: 'timelock', active: true, until: p.timelock.until })
      const count = p.backlog.size + p.receipts.size + p.reactions.size
      setTimeout(() => p.open.has(conn) && conn.send({ t: 'offline', count }), this.timing.offlineEndMs).unref()
      return p
    }
    this.startLink(conn, p)
    return p
  }

  private startLink(conn: Conn, p: SimPhone): void {
    p.link?.conn.close(SIM_CLOSE.LINK_WINDOW_OVER, 'another link attempt started')
    p.endLink()
    const { firstQrMs, nextQrMs, qrRefs } = this.timing
    p.link = { conn, refsLeft: qrRefs, timer: null, pairingCode: null, windowEndsAt: Date.now() + firstQrMs + (qrRefs - 1) * nextQrMs, passkeyStalled: false }
    const nextRef = (first: boolean) => {
      const link = p.link
      if (!link || link.conn !== conn) return
      if (link.refsLeft === 0) {
        p.endLink()
        conn.close(SIM_CLOSE.LINK_WINDOW_OVER, 'QR refs attempts ended')
        return
      }
      link.refsLeft--
      const life = first ? firstQrMs : nextQrMs
      if (!link.passkeyStalled) conn.send({ t: 'qr', ref: randomBytes(12).toString('base64url'), expiresAt: Date.now() + life })
      link.timer = setTimeout(() => nextRef(false), life)
    }
    nextRef(true)
  }

  private deviceSend(conn: Conn, p: SimPhone, msg: Extract<ClientMsg, { t: 'send' }>): void {
    if (!p.open.has(conn)) {
      conn.send({ t: 'send_error', id: msg.id, code: 428, reason: 'not logged in' })
      return
    }
    if (p.banned) {
      conn.send({ t: 'send_error', id: msg.id, code: 463, reason: 'the account is restricted' })
      return
    }
    const to = msg.to.phone ?? (msg.to.lid ? p.lidToPhone.get(msg.to.lid) : undefined) ?? msg.to.lid
    if (!to) {
      conn.send({ t: 'send_error', id: msg.id, code: 400, reason: 'no recipient' })
      return
    }
    // The reach-out time lock refuses new chats with 463 (Baileys: NACK_REASONS.SenderReachoutTimelocked).
    if (timelocked(p, to)) {
      conn.send({ t: 'send_error', id: msg.id, code: 463, reason: 'reach-out time lock: the account may not start new chats now' })
      return
    }
    // The same message id twice is one message (a resend after a reconnect).
    if (!p.outbox.some((e) => e.id === msg.id)) {
      p.outbox.push({ id: msg.id, message_id: msg.messageId, to, text: msg.text, media_url: msg.mediaUrl, quoted: msg.quoted?.id ?? null, at: Date.now() })
    }
    p.chats.add(to)
    conn.send({ t: 'send_ack', id: msg.id })
  }

  // ── control side (the user's phone and their contacts) ──────────────────────────────────────────────────────────

  /** The phone confirms the link shown on the relay (QR scanned or pairing code typed). */
  link(number: string, opts: { passkey: boolean; contacts: SimContact[] }): { linked: boolean; passkey_required: boolean } {
    const p = this.known(number)
    const link = p.link
    if (!link) throw new SimError(409, `no link is pending for ${number}: the relay must be showing a QR code or pairing code`)
    if (opts.passkey) {
      // Newer accounts demand a passkey; the QR flow stalls instead of completing.
      link.passkeyStalled = true
      link.conn.send({ t: 'passkey_required' })
      return { linked: false, passkey_required: true }
    }
    const device = { id: `dev_${randomBytes(6).toString('hex')}`, secret: randomBytes(24).toString('base64url') }
    p.device = device
    p.addressBook = opts.contacts
    p.contactsDelivered = false
    const conn = link.conn
    p.endLink()
    conn.send({ t: 'paired', device, me: { phone: p.phone, lid: p.lid } })
    // The real service restarts the stream after pairing; the device logs in again with its new credentials.
    conn.close(SIM_CLOSE.RESTART_REQUIRED, 'restart required')
    return { linked: true, passkey_required: false }
  }

  inbound(
    number: string,
    m: { from: string; text: string; name: string | null; mediaUrl: string | null; lid: string | null; attachment?: SimAttachment; replyTo?: string }
  ): { id: string } {
    const p = this.known(number)
    if (!p.linked) throw new SimError(409, `${number} has no linked device`)
    // A quoted reply names the quoted message by its network id: one of this chat (sent to them, or by them).
    const quoted = m.replyTo
      ? (p.outbox.find((e) => (e.id === m.replyTo || e.message_id === m.replyTo) && e.to === m.from)?.id ??
        (p.received.get(m.replyTo) === m.from ? m.replyTo : null))
      : null
    if (m.replyTo && !quoted) throw new SimError(404, `no message ${m.replyTo} in the chat of ${number} with ${m.from}`)
    this.writers.add(m.from)
    p.chats.add(m.from)
    if (m.lid) p.lidToPhone.set(m.lid, m.from)
    let media: SimMedia | null = null
    if (m.attachment) {
      const fileId = randomBytes(12).toString('hex')
      this.mediaFiles.set(fileId, m.attachment)
      const a = m.attachment
      media = { url: `${this.mediaOrigin}/sim/media/${fileId}`, contentType: a.contentType, fileName: a.fileName, size: a.bytes.length, voiceNote: a.voiceNote }
    }
    const msg = {
      t: 'message' as const,
      id: upstreamMessageId(),
      from: { phone: m.from, lid: m.lid, name: m.name },
      text: m.text,
      mediaUrl: m.mediaUrl,
      mediaType: m.mediaUrl ? guessType(m.mediaUrl) : null,
      media,
      ts: Date.now(),
      offline: false,
      replyTo: quoted,
    }
    p.received.set(msg.id, m.from)
    p.backlog.set(msg.id, msg)
    p.deliver(msg)
    return { id: msg.id }
  }

  receipt(number: string, messageId: string, status: 'delivered' | 'read'): { id: string } {
    const p = this.known(number)
    const sent = p.outbox.find((e) => e.id === messageId || e.message_id === messageId)
    if (!sent) throw new SimError(404, `no sent message ${messageId} in the outbox of ${number}`)
    const r = { t: 'receipt' as const, rid: `rc_${randomBytes(6).toString('hex')}`, id: sent.id, status }
    p.receipts.set(r.rid, r)
    p.deliver(r)
    return { id: sent.id }
  }

  /** The network loses the device's connection (not a logout): the device reconnects on its own. */
  drop(number: string): void {
    const p = this.known(number)
    for (const c of p.open) c.close(SIM_CLOSE.CONNECTION_LOST, 'connection lost')
    p.open.clear()
  }

  logout(p: SimPhone): void {
    p.device = null
    p.backlog.clear()
    p.receipts.clear()
    for (const c of p.open) c.close(SIM_CLOSE.LOGGED_OUT, 'logged out from the phone')
    p.open.clear()
  }

  ban(number: string): void {
    const p = this.known(number)
    p.banned = true
    for (const c of p.open) c.close(SIM_CLOSE.BANNED, 'this number is banned')
    p.open.clear()
    p.link?.conn.close(SIM_CLOSE.BANNED, 'this number is banned')
    p.endLink()
  }
}

function guessType(url: string): string | null {
  const ext = url.split('?')[0]?.split('.').at(-1)?.toLowerCase()
  const types: Record<string, string> = {
    jpg: 'image/jpeg',
    jpeg: 'image/jpeg',
    png: 'image/png',
    gif: 'image/gif',
    mp4: 'video/mp4',
    ogg: 'audio/ogg',
    mp3: 'audio/mpeg',
    pdf: 'application/pdf',
  }
  return (ext && types[ext]) || null
}
