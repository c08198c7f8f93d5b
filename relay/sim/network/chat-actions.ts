/**
 * The simulated network's chat actions (issue 25), as alpha's servers answer them: a reaction to a message of the
 * chat, `composing` presence, read receipts for messages the contact sent, and the on-network query for a number
 * (`onWhatsApp`): what the device did is kept per phone (GET /sim/alpha/{phone}/actions). The control side plays the
 * contacts and the network: a contact reacts (kept until the device acknowledges it, like a message), and the
 * reach-out time lock is set or lifted (pushed to the device as Baileys' `NotificationUserReachoutTimelockUpdate`).
 */
import { randomBytes } from 'node:crypto'
import type { ClientMsg } from './protocol'
import type { Conn, SimPhone } from './phone'

export type ChatActionMsg = Extract<ClientMsg, { t: 'react' | 'presence' | 'read' | 'lookup' }>

/** Who is on the network: every simulated phone, everyone who wrote to one, and every address-book entry. */
export type Registry = { isRegistered(phone: string): boolean }

export function onChatAction(conn: Conn, p: SimPhone, msg: ChatActionMsg, registry: Registry): void {
  const outcome = carryOut(p, conn, msg, registry)
  if (!outcome.ok) conn.send({ t: 'action_error', rid: msg.rid, ...outcome.error })
  else conn.send({ t: 'action_ack', rid: msg.rid, ...(outcome.onNetwork === undefined ? {} : { onNetwork: outcome.onNetwork }) })
}

type Outcome = { ok: true; onNetwork?: boolean } | { ok: false; error: { code: number; reason: string } }

const refuse = (code: number, reason: string): Outcome => ({ ok: false, error: { code, reason } })

/** Does the action on the network and records it, or says why not (with the codes the network's errors use). */
function carryOut(p: SimPhone, conn: Conn, msg: ChatActionMsg, registry: Registry): Outcome {
  if (!p.open.has(conn)) return refuse(428, 'not logged in')
  if (p.banned) return refuse(463, 'the account is restricted')
  const at = Date.now()
  if (msg.t === 'lookup') {
    const onNetwork = registry.isRegistered(msg.phone)
    p.actions.push({ kind: 'lookup', phone: msg.phone, on_network: onNetwork, at })
    return { ok: true, onNetwork }
  }
  const to = msg.to.phone ?? (msg.to.lid ? p.lidToPhone.get(msg.to.lid) : undefined) ?? msg.to.lid
  if (!to) return refuse(400, 'no recipient')
  switch (msg.t) {
    case 'react': {
      // The target must be a message of this chat: one the account sent to them, or one they sent.
      const known = msg.target.fromMe ? p.outbox.some((e) => e.id === msg.target.id && e.to === to) : p.received.get(msg.target.id) === to
      if (!known) return refuse(404, 'no such message in this chat')
      p.actions.push({ kind: 'react', to, target: msg.target.id, emoji: msg.emoji, at })
      return { ok: true }
    }
    case 'presence':
      p.actions.push({ kind: 'presence', to, state: msg.state, at })
      return { ok: true }
    case 'read': {
      const theirs = msg.ids.filter((id) => p.received.get(id) === to)
      if (theirs.length === 0) return refuse(404, 'none of these messages came from this contact')
      p.actions.push({ kind: 'read', to, ids: theirs, at })
      return { ok: true }
    }
  }
}

/**
 * A contact reacts to a message of the chat ('' removes the reaction): kept until the device acknowledges it. null
 * when the chat has no such message.
 */
export function contactReacts(p: SimPhone, r: { from: string; messageId: string; emoji: string }): { id: string } | null {
  const sent = p.outbox.find((e) => (e.id === r.messageId || e.message_id === r.messageId) && e.to === r.from)
  const target = sent?.id ?? (p.received.get(r.messageId) === r.from ? r.messageId : null)
  if (!target) return null
  const reaction = {
    t: 'reaction' as const,
    id: `RE${randomBytes(8).toString('hex').toUpperCase()}`,
    from: { phone: r.from, lid: null, name: null },
    target,
    emoji: r.emoji,
    ts: Date.now(),
    offline: false,
  }
  p.reactions.set(reaction.id, reaction)
  p.deliver(reaction)
  return { id: reaction.id }
}

/** The network sets or lifts the account's reach-out time lock; a device is told at once, a later login at login. */
export function setTimelock(p: SimPhone, t: { active: boolean; until: number | null }): void {
  p.timelock = t.active ? { until: t.until ?? Date.now() + 60_000 } : null
  p.deliver({ t: 'timelock', active: t.active, until: t.active ? p.timelock!.until : null })
}

/** Whether the time lock refuses a send to `to`: it blocks new chats only (someone the account never talked to). */
export function timelocked(p: SimPhone, to: string): boolean {
  if (!p.timelock) return false
  if (p.timelock.until <= Date.now()) {
    p.timelock = null
    return false
  }
  return !p.chats.has(to)
}
