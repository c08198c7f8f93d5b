/**
 * One number on the simulated beta network: whether it has an account, its profile, two-step password, address
 * book, standing (banned, flagged as a stranger, flood-waited), message ids, what it sent (the outbox people
 * received), its update box (pts, seq and the log updates.GetDifference answers from), its message history per chat
 * (messages.GetHistory, messages.GetDialogs), and the faults the control API scripted for it.
 */
import type { Api } from 'telegram'
import { UpdateBox } from './beta-updates'

/** A reaction, typing notice or read mark an account's session made (GET /sim/beta/{phone}/actions). */
export type BetaActionEntry =
  | { kind: 'react'; to: string; message_id: number; emoji: string; at: number }
  | { kind: 'typing'; to: string; at: number }
  | { kind: 'read'; to: string; max_id: number; at: number }

export type BetaFile = { contentType: string; fileName: string | null; bytes: Buffer }

export type BetaOutboxEntry = {
  /** The upstream message id (per account, as beta's private message ids are). */
  id: number
  /** The gateway's message id when the sender named it (the simulator's client does), else null. */
  messageId: string | null
  toUserId: string
  to: string
  text: string
  file: (BetaFile & { key: string }) | null
  sentAt: number
  /** The send's random_id (decimal): beta answers a repeat of it with this message instead of sending again. */
  randomId: string | null
  /** The update the send took in the sender's box: a repeat of the same random_id is answered with it. */
  own: Api.UpdateNewMessage | null
  /** The id of the message this send quoted (InputReplyToMessage), if any. */
  replyTo: number | null
}

export class BetaAccount {
  registered = true
  banned = false
  /** PEER_FLOOD on every send. */
  stranger = false
  floodUntil = 0
  password: string | null = null
  hint: string | null = null
  firstName: string
  lastName: string | null
  username: string | null = null
  /** People see this account's phone in the users they are sent (beta's privacy setting). */
  phoneHidden = false
  dc = 2
  /** User ids in this account's address book. */
  contacts: string[] = []
  nextMessageId = 100
  readonly outbox: BetaOutboxEntry[] = []
  readonly box = new UpdateBox()
  /** Every message of this account's private chats, oldest first, as this account sees them. */
  readonly history: Api.Message[] = []
  /** Per person (user id): the newest of our messages they read. */
  readonly readOutbox = new Map<string, number>()
  /** The next this many updates are recorded but pushed to no session (they show as a gap). */
  withhold = 0
  /** Errors the next calls of a method answer instead (the control API's rpc-error). */
  readonly scriptedErrors: Array<{ method: string; message: string; code: number }> = []
  /** What the account's sessions did besides sending (beta-chat-actions.ts), in order. */
  readonly actions: BetaActionEntry[] = []

  constructor(
    /** E.164. */
    readonly phone: string,
    readonly userId: string
  ) {
    this.firstName = 'User'
    this.lastName = phone.slice(-4)
  }

  get digits(): string {
    return this.phone.replace(/^\+/, '')
  }

  setName(name: string): void {
    const [first, ...rest] = name.trim().split(/\s+/)
    this.firstName = first ?? name
    this.lastName = rest.length > 0 ? rest.join(' ') : null
  }
}
