/**
 * The companion's cryptography in alpha's passkey ("shortcake") linking, step for step as whatsmeow's
 * `pair-passkey.go` (tulir/whatsmeow b572e5bc, PR #1186) does it: the ephemeral identity and its commitment for the
 * prologue, the handoff proof, the code both sides show, the pairing key and the encrypted pairing request.
 * Pure functions; the wire is passkey-stanzas.ts, the order of steps passkey-flow.ts.
 */
import { createCipheriv, createHash, createHmac, hkdfSync, randomBytes } from 'node:crypto'
import { bytesToCrockford, Curve, proto } from '@whiskeysockets/baileys'

/** whatsmeow: `hkdfutil.SHA256(AdvSecretKey, nil, "shortcake-passkey-handoff-v1", 32)`, valid 5 minutes. */
const HANDOFF_INFO = 'shortcake-passkey-handoff-v1'
export const PASSKEY_HANDOFF_TTL_MS = 5 * 60_000
/** whatsmeow: the HKDF info of the pairing key; its salt is `Companion Pairing <deviceType> with ref <ref>`. */
const PAIRING_KEY_INFO = 'Pairing Information Encryption Key'
const NONCE_BYTES = 32
const KEY_BYTES = 32
const IV_BYTES = 12
const CODE_BYTES = 5

const sha256 = (...parts: Uint8Array[]) => {
  const h = createHash('sha256')
  for (const p of parts) h.update(p)
  return h.digest()
}

/** RFC 5869 HKDF-SHA256; no salt is HashLen zero bytes, as Go's hkdf.New with a nil salt. */
function hkdf(ikm: Uint8Array, salt: Uint8Array | null, info: string, length: number): Buffer {
  return Buffer.from(hkdfSync('sha256', ikm, salt ?? Buffer.alloc(0), Buffer.from(info, 'utf8'), length))
}

/** The HMAC key that proves, in the prologue, that this companion showed the QR code (or typed the code) the phone used. */
export function handoffKey(advSecretKey: Uint8Array): Buffer {
  return hkdf(advSecretKey, null, HANDOFF_INFO, 32)
}

export type CompanionEphemeral = {
  keyPair: { private: Uint8Array; public: Uint8Array }
  /** Committed to now, revealed (`companion_nonce`) only after the primary's identity came: the phone cannot grind the code. */
  nonce: Buffer
  ref: string
  deviceType: proto.DeviceProps.PlatformType
  /** The encoded `ProloguePayload`: the `CompanionEphemeralIdentity` and `SHA-256(identity ‖ nonce)`. */
  prologuePayload: Buffer
}

export function companionEphemeral(ref: string, deviceType: proto.DeviceProps.PlatformType): CompanionEphemeral {
  const keyPair = Curve.generateKeyPair()
  const nonce = randomBytes(NONCE_BYTES)
  const identity = Buffer.from(proto.CompanionEphemeralIdentity.encode({ publicKey: keyPair.public, deviceType, ref }).finish())
  const prologuePayload = Buffer.from(
    proto.ProloguePayload.encode({ companionEphemeralIdentity: identity, commitment: { hash: sha256(identity, nonce) } }).finish()
  )
  return { keyPair, nonce, ref, deviceType, prologuePayload }
}

/** whatsmeow: `HMAC-SHA256(handoffKey, prologuePayload)`, sent as `pairing_handoff_proof`. */
export function handoffProof(key: Uint8Array, prologuePayload: Uint8Array): Buffer {
  return createHmac('sha256', key).update(prologuePayload).digest()
}

export type PrimaryEphemeral = { publicKey: Buffer; nonce: Buffer }

/** The primary's `PrimaryEphemeralIdentity` from `crsc_continuation`; both fields must be 32 bytes (whatsmeow checks the same). */
export function primaryEphemeral(bytes: Uint8Array): PrimaryEphemeral {
  const decoded = proto.PrimaryEphemeralIdentity.decode(bytes)
  if (decoded.publicKey?.length !== KEY_BYTES) throw new Error(`primary ephemeral public key is ${decoded.publicKey?.length ?? 0} bytes, not 32`)
  if (decoded.nonce?.length !== NONCE_BYTES) throw new Error(`primary ephemeral nonce is ${decoded.nonce?.length ?? 0} bytes, not 32`)
  return { publicKey: Buffer.from(decoded.publicKey), nonce: Buffer.from(decoded.nonce) }
}

/** `XXXX-XXXX`: the primary's nonce XOR `SHA-256(companionNonce ‖ primaryPub)`, five bytes in the pairing-code alphabet. */
export function passkeyCode(companionNonce: Uint8Array, primary: PrimaryEphemeral): string {
  const digest = sha256(companionNonce, primary.publicKey)
  const bytes = Buffer.alloc(CODE_BYTES)
  for (let i = 0; i < CODE_BYTES; i++) bytes[i] = primary.nonce[i]! ^ digest[i]!
  const code = bytesToCrockford(bytes)
  return `${code.slice(0, 4)}-${code.slice(4)}`
}

/** HKDF(X25519(companion, primary), salt `Companion Pairing <deviceType as a number> with ref <ref>`, info above). */
export function pairingKey(companion: CompanionEphemeral, primary: PrimaryEphemeral): Buffer {
  const shared = Curve.sharedKey(companion.keyPair.private, primary.publicKey)
  return hkdf(shared, Buffer.from(`Companion Pairing ${companion.deviceType} with ref ${companion.ref}`, 'utf8'), PAIRING_KEY_INFO, KEY_BYTES)
}

/**
 * The encoded `EncryptedPairingRequest`: a `PairingRequest` (the noise and identity public keys, the new ADV secret)
 * under AES-256-GCM with a random 12-byte IV and no additional data, the tag after the ciphertext (Go's Seal).
 */
export function encryptedPairingRequest(key: Uint8Array, request: { noisePublic: Uint8Array; identityPublic: Uint8Array; advSecret: Uint8Array }): Buffer {
  const plain = proto.PairingRequest.encode({
    companionPublicKey: request.noisePublic,
    companionIdentityKey: request.identityPublic,
    advSecret: request.advSecret,
  }).finish()
  const iv = randomBytes(IV_BYTES)
  const cipher = createCipheriv('aes-256-gcm', key, iv)
  const sealed = Buffer.concat([cipher.update(plain), cipher.final(), cipher.getAuthTag()])
  return Buffer.from(proto.EncryptedPairingRequest.encode({ encryptedPayload: sealed, iv }).finish())
}

/** A fresh ADV secret for the pairing request (whatsmeow rotates it per ceremony; pair-success is signed with it). */
export function newAdvSecret(): Buffer {
  return randomBytes(32)
}
