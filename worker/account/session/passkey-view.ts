/**
 * What the status endpoint says while alpha's passkey ceremony runs (docs/channels/alpha.md): the reason an agent
 * switches on, and the sentence it can pass on to the owner.
 */
/** What the sentences read of a session record (state.ts builds the view from it; typed here to keep the import one way). */
type CeremonyRecord = { session: string; passkey?: { code: string | null; confirm: boolean; used: boolean } | null }

/** What an agent reads in `message` while the ceremony runs (and tells the owner). */
export const PASSKEY_MESSAGES = {
  required:
    'The phone asks for the owner’s passkey before it links this device. Send the owner the connect page (connect_url): on a computer it gives a passkey record to paste into the passkey helper on web.whatsapp.com, where the owner confirms with their fingerprint, face or PIN. Do not call connect again meanwhile: that cancels the ceremony.',
  accepted: 'The owner’s passkey was accepted; waiting for the phone to answer.',
  confirm: (code: string) =>
    `The owner compares the code ${code} on the connect page with the one on the phone and, if they match, presses “The codes match” there.`,
  code: (code: string) => `The passkey ceremony is through (code ${code}); the record finishes on the phone.`,
} as const

/** The status endpoint's reason and message while a ceremony runs. */
export function passkeyReason(record: CeremonyRecord): { reason: string; message: string } {
  const p = record.passkey
  if (p?.code)
    return {
      reason: 'passkey_code',
      message: p.confirm && record.session === 'passkey_code' ? PASSKEY_MESSAGES.confirm(p.code) : PASSKEY_MESSAGES.code(p.code),
    }
  return { reason: 'passkey_required', message: p?.used ? PASSKEY_MESSAGES.accepted : PASSKEY_MESSAGES.required }
}
