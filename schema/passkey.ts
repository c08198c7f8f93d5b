/**
 * The two WebAuthn documents of alpha's passkey linking (docs/channels/alpha.md, "When the phone asks for a passkey"),
 * as they cross the relay protocol and the ceremony API: the request options alpha sends with
 * `passkey_prologue_request` and the assertion the owner's browser makes from them on web.whatsapp.com.
 *
 * Shapes follow whatsmeow's `types/passkey.go` (`WebAuthnPublicKey`, `WebAuthnResponse`): binary fields are unpadded
 * base64url, as `PublicKeyCredential.parseRequestOptionsFromJSON()` reads them and `toJSON()` writes them. What the
 * browser adds beyond whatsmeow's fields (`authenticatorAttachment`, `clientExtensionResults`) is dropped here, as
 * whatsmeow's unmarshal-and-marshal drops it, so the relay sends alpha exactly whatsmeow's document.
 */
import { z } from 'zod'

/** Unpadded base64url (RFC 4648 §5), as JSON-encoded WebAuthn binary fields are. */
export const Base64Url = z.string().regex(/^[A-Za-z0-9_-]*$/, 'must be unpadded base64url')

/** The largest request options document the relay passes on (the real one is about 200 bytes). */
export const PASSKEY_OPTIONS_MAX_BYTES = 8192

/**
 * `PublicKeyCredentialRequestOptionsJSON` as alpha sends it, e.g. `{"challenge":"…","timeout":600000,"rpId":
 * "whatsapp.com","allowCredentials":[],"userVerification":"required","extensions":{"uvm":true}}` (a capture quoted in
 * zapo's shortcake-flow test and in Baileys#2689). Fields alpha may add later are kept: the browser reads them.
 */
export const PasskeyRequestOptions = z.looseObject({
  challenge: Base64Url.min(16).max(1024),
  timeout: z.number().int().positive().optional(),
  rpId: z.string().min(1).max(253).optional(),
  allowCredentials: z
    .array(z.looseObject({ id: Base64Url.min(1).max(1024), type: z.literal('public-key'), transports: z.array(z.string().max(32)).max(16).optional() }))
    .max(64)
    .optional(),
  userVerification: z.enum(['required', 'preferred', 'discouraged']).optional(),
  extensions: z.record(z.string(), z.unknown()).optional(),
})
export type PasskeyRequestOptions = z.infer<typeof PasskeyRequestOptions>

/** The request options, or null when the text is not such a document. */
export function parsePasskeyOptions(json: string): PasskeyRequestOptions | null {
  if (json.length > PASSKEY_OPTIONS_MAX_BYTES) return null
  try {
    const parsed = PasskeyRequestOptions.safeParse(JSON.parse(json))
    return parsed.success ? parsed.data : null
  } catch {
    return null
  }
}

/**
 * The options as the JSON text alpha sent: text across frames and Durable Object RPC (whose types must be
 * serializable, which an open JSON object is not), parsed with `parsePasskeyOptions` where they are read.
 */
export const PasskeyRequestOptionsJson = z.string().refine((s) => parsePasskeyOptions(s) !== null, 'must be WebAuthn request options JSON')

/** `PublicKeyCredential.toJSON()` of an assertion, narrowed to whatsmeow's `WebAuthnResponse`. */
export const PasskeyAssertion = z.object({
  id: Base64Url.min(1).max(1366),
  rawId: Base64Url.min(1).max(1366),
  type: z.literal('public-key'),
  response: z.object({
    clientDataJSON: Base64Url.min(1).max(8192),
    authenticatorData: Base64Url.min(50).max(8192),
    signature: Base64Url.min(1).max(1024),
    userHandle: Base64Url.max(1024).nullable().optional(),
  }),
})
export type PasskeyAssertion = z.infer<typeof PasskeyAssertion>

/** The short code both sides derive (whatsmeow: five bytes in the pairing-code alphabet, shown `XXXX-XXXX`). */
export const PasskeyCode = z.string().regex(/^[1-9A-HJ-NP-TV-Z]{4}-[1-9A-HJ-NP-TV-Z]{4}$/)
