/**
 * One simulated phone number on the simulated network: its linked device, the link in progress (QR refs or a
 * pairing code), the messages its contacts sent that the device has not acknowledged yet (delivered again on every
 * login, like the real offline backlog), receipts, and what its contacts received (the outbox).
 */
import { randomBytes } from 'node:crypto'
import type { z } from 'zod'
import type { Device, ServerMsg, SimPeer } from './protocol'

export type Conn = { send(msg: ServerMsg): void; close(code: number, reason: string): void; openedAt: number }

export type SimContact = z.infer<typeof SimPeer> & { hasChat: boolean }

export type PendingInbound = Extract<ServerMsg, { t: 'message' }>
export type PendingReceipt = Extract<ServerMsg, { t: 'receipt' }>
export type PendingReaction = Extract<ServerMsg, { t: 'reaction' }>

/** What the device did, in order: GET /sim/alpha/{phone}/actions. */
export type ActionEntry =
  | { kind: 'react'; to: string; target: string; emoji: string; at: number }
  | { kind: 'presence'; to: string; state: 'composing' | 'paused'; at: number }
  | { kind: 'read'; to: string; ids: string[]; at: number }
  | { kind: 'lookup'; phone: string; on_network: boolean; at: number }

export type OutboxEntry = { id: string; message_id: string; to: string; text: string; media_url: string | null; quoted: string | null; at: number }

export type LinkInProgress = {
  conn: Conn
  refsLeft: number
  timer: NodeJS.Timeout | null
  pairingCode: string | null
  windowEndsAt: number
  passkeyStalled: boolean
}

/** Crockford base32 without 0/O/I/L confusion, as the real pairing codes use. */
const CODE_ALPHABET = '123456789ABCDEFGHJKLMNPQRSTVWXYZ'

export function pairingCode(): string {
  return [...randomBytes(8)].map((b) => CODE_ALPHABET[b % CODE_ALPHABET.length]).join('')
}

export function upstreamMessageId(): string {
  return `SIM${randomBytes(8).toString('hex').toUpperCase()}`
}

export class SimPhone {
  device: Device | null = null
  /** The number's own LID on the network. */
  readonly lid = `${randomBytes(6).readUIntBE(0, 6)}@lid`
  banned = false
  addressBook: SimContact[] = []
  contactsDelivered = false
  link: LinkInProgress | null = null
  readonly open = new Set<Conn>()
  maxConcurrent = 0
  readonly backlog = new Map<string, PendingInbound>()
  readonly receipts = new Map<string, PendingReceipt>()
  readonly outbox: OutboxEntry[] = []
  readonly lidToPhone = new Map<string, string>()
  logins = 0
  /** Contacts' reactions the device has not acknowledged yet (sent again on every login, like the backlog). */
  readonly reactions = new Map<string, PendingReaction>()
  /** Messages contacts sent, by network id: who sent each (what read marks and reactions may point at). */
  readonly received = new Map<string, string>()
  /** Everyone the account has a chat with (they wrote, or it wrote to them): the time lock does not block these. */
  readonly chats = new Set<string>()
  /** What the device did besides sending (chat-actions.ts). */
  readonly actions: ActionEntry[] = []
  /** The reach-out time lock in force, if any. */
  timelock: { until: number } | null = null

  constructor(readonly phone: string) {}

  get linked(): boolean {
    return this.device !== null
  }

  view() {
    return {
      phone: this.phone,
      lid: this.lid,
      linked: this.linked,
      banned: this.banned,
      link_pending: this.link !== null,
      pairing_code: this.link?.pairingCode ?? null,
      open_connections: this.open.size,
      max_concurrent_connections: this.maxConcurrent,
      logins: this.logins,
      pending_inbound: this.backlog.size,
      pending_receipts: this.receipts.size,
      outbox_count: this.outbox.length,
      pending_reactions: this.reactions.size,
      timelock_until: this.timelock?.until ?? null,
    }
  }

  /** Delivers to the device's live connection, if any (the newest one). */
  deliver(msg: ServerMsg): void {
    const conn = [...this.open].at(-1)
    conn?.send(msg)
  }

  endLink(): void {
    if (this.link?.timer) clearTimeout(this.link.timer)
    this.link = null
  }
}
