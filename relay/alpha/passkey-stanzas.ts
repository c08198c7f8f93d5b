/**
 * The stanzas of alpha's passkey linking, each as whatsmeow sends or reads it (`pair-passkey.go`, `notification.go`):
 * every request is `<iq xmlns="md" type=… to="s.whatsapp.net">` with one child (Baileys' `query` adds the id), and
 * the two notifications come from the server JID. A malformed pairing IQ can get a number banned, so nothing here
 * deviates from whatsmeow's shapes: child names, child order, raw bytes as content.
 */
import { getBinaryNodeChild, S_WHATSAPP_NET } from '@whiskeysockets/baileys'
import type { BinaryNode } from '@whiskeysockets/baileys'
import type { PasskeyAssertion } from '../../schema/passkey'

/** `<notification type>` values alpha uses (whatsmeow notification.go; Baileys#2672). */
export const PASSKEY_PROLOGUE_REQUEST = 'passkey_prologue_request'
export const PASSKEY_CONTINUATION = 'crsc_continuation'

function mdIq(type: 'get' | 'set', child: BinaryNode): BinaryNode {
  return { tag: 'iq', attrs: { to: S_WHATSAPP_NET, type, xmlns: 'md' }, content: [child] }
}

/** whatsmeow `getCompanionRef`: `<iq type="get"><ref/></iq>`; the answer's `<ref>` is the pairing ref. */
export const refRequest = (): BinaryNode => mdIq('get', { tag: 'ref', attrs: {} })

/** whatsmeow `getPasskeyRequestOptions`, for a notification that came without its options. */
export const requestOptionsRequest = (): BinaryNode => mdIq('get', { tag: 'passkey_request_options', attrs: {} })

/**
 * whatsmeow `SendPasskeyResponse`: `<passkey_prologue>` with `credential_id` (the raw id's bytes), `webauthn_assertion`
 * (the JSON of `types.WebAuthnResponse`), `prologue_payload`, and `pairing_handoff_proof` while the handoff key is valid.
 */
export function prologueRequest(p: { assertion: PasskeyAssertion; prologuePayload: Uint8Array; handoffProof: Uint8Array | null }): BinaryNode {
  const children: BinaryNode[] = [
    { tag: 'credential_id', attrs: {}, content: Buffer.from(p.assertion.rawId, 'base64url') },
    { tag: 'webauthn_assertion', attrs: {}, content: Buffer.from(assertionJson(p.assertion), 'utf8') },
    { tag: 'prologue_payload', attrs: {}, content: Buffer.from(p.prologuePayload) },
  ]
  if (p.handoffProof) children.push({ tag: 'pairing_handoff_proof', attrs: {}, content: Buffer.from(p.handoffProof) })
  return mdIq('set', { tag: 'passkey_prologue', attrs: {}, content: children })
}

/** whatsmeow: `<companion_nonce>` with the 32 committed bytes, after the continuation. */
export const nonceRequest = (nonce: Uint8Array): BinaryNode => mdIq('set', { tag: 'companion_nonce', attrs: {}, content: Buffer.from(nonce) })

/** whatsmeow `SendPasskeyConfirmation`: `<encrypted_pairing_request>` with the encoded `EncryptedPairingRequest`. */
export const pairingRequest = (encrypted: Uint8Array): BinaryNode =>
  mdIq('set', { tag: 'encrypted_pairing_request', attrs: {}, content: Buffer.from(encrypted) })

/**
 * `json.Marshal` of whatsmeow's `WebAuthnResponse`: its fields in its order, binary as unpadded base64url, a missing
 * user handle as null, and nothing else of what the browser sent.
 */
export function assertionJson(a: PasskeyAssertion): string {
  return JSON.stringify({
    id: a.id,
    rawId: a.rawId,
    type: a.type,
    response: {
      clientDataJSON: a.response.clientDataJSON,
      authenticatorData: a.response.authenticatorData,
      signature: a.response.signature,
      userHandle: a.response.userHandle ?? null,
    },
  })
}

/** Content as text: the decoder gives bytes, or a string when the bytes happen to be in its token table. */
function text(node: BinaryNode | undefined): string | null {
  const c = node?.content
  if (typeof c === 'string') return c
  if (c instanceof Uint8Array) return Buffer.from(c).toString('utf8')
  return null
}

function bytes(node: BinaryNode | undefined): Buffer | null {
  const c = node?.content
  if (c instanceof Uint8Array) return Buffer.from(c)
  if (typeof c === 'string') return Buffer.from(c, 'utf8')
  return null
}

/**
 * A passkey notification is honoured only from the server JID (whatsmeow ignores any other sender). Baileys decodes
 * the server's JID pair as `@s.whatsapp.net`; the bare token form is the same JID to whatsmeow's parser.
 */
export const fromServer = (node: BinaryNode): boolean => node.attrs.from === S_WHATSAPP_NET || node.attrs.from === 's.whatsapp.net'

/** The JSON text of `<passkey_request_options>` in a notification or an IQ answer, if present. */
export const requestOptionsOf = (node: BinaryNode): string | null => text(getBinaryNodeChild(node, 'passkey_request_options'))

/** The pairing ref of a `<ref>` answer. */
export const refOf = (node: BinaryNode): string | null => text(getBinaryNodeChild(node, 'ref'))

/** The encoded `PrimaryEphemeralIdentity` of a `crsc_continuation`. */
export const primaryIdentityOf = (node: BinaryNode): Buffer | null => bytes(getBinaryNodeChild(node, 'primary_ephemeral_identity'))
