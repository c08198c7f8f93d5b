/**
 * Identifiers on alpha: E.164 phone numbers, phone JIDs (`<digits>@s.whatsapp.net`) and LIDs (`<opaque>@lid`, the
 * privacy-preserving id alpha now prefers). Pure helpers; which LID belongs to which phone is `peers.ts`'s job.
 */
import { isHostedLidUser, isHostedPnUser, isLidUser, isPnUser, jidDecode } from '@whiskeysockets/baileys'

export const PN_SERVER = 's.whatsapp.net'
export const LID_SERVER = 'lid'

const E164 = /^\+[1-9]\d{6,14}$/

export function isE164(phone: string): boolean {
  return E164.test(phone)
}

/** `+15551234567` → `15551234567`: `requestPairingCode` wants digits with the country code and nothing else. */
export function phoneDigits(e164: string): string {
  if (!isE164(e164)) throw new Error('not an E.164 phone number')
  return e164.slice(1)
}

/** `+15551234567` → `15551234567@s.whatsapp.net`. */
export function phoneToJid(e164: string): string {
  return `${phoneDigits(e164)}@${PN_SERVER}`
}

/**
 * A person's JID without device or agent, with business-hosted servers folded into the standard ones (Baileys does
 * the same before a lookup), or null when the JID is not a person (group, broadcast, newsletter, bot, malformed).
 */
export function personJid(jid: string | null | undefined): string | null {
  if (!jid) return null
  const decoded = jidDecode(jid)
  if (!decoded?.user || !/^\d+$/.test(decoded.user)) return null
  if (isPnUser(jid) || isHostedPnUser(jid)) return `${decoded.user}@${PN_SERVER}`
  if (isLidUser(jid) || isHostedLidUser(jid)) return `${decoded.user}@${LID_SERVER}`
  return null
}

export function isLidJid(jid: string | null | undefined): jid is string {
  return !!jid && personJid(jid)?.endsWith(`@${LID_SERVER}`) === true
}

export function isPhoneJid(jid: string | null | undefined): jid is string {
  return !!jid && personJid(jid)?.endsWith(`@${PN_SERVER}`) === true
}

/** A phone JID (any device) → E.164, or null for anything that does not carry a phone number. */
export function jidToPhone(jid: string | null | undefined): string | null {
  const person = personJid(jid)
  if (!person?.endsWith(`@${PN_SERVER}`)) return null
  const phone = `+${person.slice(0, person.indexOf('@'))}`
  return isE164(phone) ? phone : null
}

/** The user part of a person JID (`123@lid` → `123`), the key Baileys' `lid-mapping` store uses. */
export function jidUser(jid: string): string {
  return jid.slice(0, jid.indexOf('@'))
}
