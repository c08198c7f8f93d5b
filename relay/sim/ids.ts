/** Identifiers on the simulated network, shaped like the real ones: phone JIDs, LIDs, message ids. */
import { createHash } from 'node:crypto'

export const PHONE_JID_SUFFIX = '@s.sim'
export const LID_SUFFIX = '@lid'

export function phoneJid(e164: string): string {
  return `${e164.replace(/^\+/, '')}${PHONE_JID_SUFFIX}`
}

/** Digits of a number as the upstream gives it (no +); the edge turns them into E.164. */
export function digits(e164: string): string {
  return e164.replace(/[^\d]/g, '')
}

/**
 * The upstream id of an outbound message, derived from the gateway's message id: a resend of the same message
 * after a reconnect carries the same id, and the network keeps one copy. (A real driver can do the same by passing
 * its own message id upstream.)
 */
export function upstreamIdFor(messageId: string): string {
  return `3EB0${createHash('sha256').update(messageId).digest('hex').slice(0, 16).toUpperCase()}`
}
