/**
 * MTProto 2.0 message encryption on the data centre's side (core.telegram.org/mtproto/description), computed with
 * the GramJS library's own primitives: its AuthKey (key id, aux hash), MTProtoState's msg_key → AES key/iv derivation
 * (`x = 0` for what the client sent, `x = 8` for what the server sends), its AES-IGE and SHA-256. The client side of
 * the same exchange is the unmodified MTProtoState, so a mistake here shows as GramJS refusing the message.
 *
 * Auth keys cannot come from a real key exchange (GramJS pins beta's RSA keys), so the data centre mints them
 * (`mintAuthKey`) and hands them over inside a StringSession.
 */
import { randomBytes } from 'node:crypto'
import type bigInt from 'big-integer'
import { AuthKey } from 'telegram/crypto/AuthKey'
import { IGE } from 'telegram/crypto/IGE'
import { Logger, LogLevel } from 'telegram/extensions/Logger'
import { readBufferFromBigInt, sha256 } from 'telegram/Helpers'
import { MTProtoState } from 'telegram/network/MTProtoState'
// The library's answers for 8-byte longs (its tests hold them to it), without big-integer's arithmetic per long.
import { readBigIntFromBuffer, toSignedLittleBuffer } from '../../../beta/tl-longs'

/** A decrypted client message: the envelope fields and the TL body. */
export type Plain = { salt: bigInt.BigInteger; sessionId: bigInt.BigInteger; msgId: bigInt.BigInteger; seqNo: number; body: Buffer }

/** MTProtoState only for its key derivation, which uses nothing of the state but its arguments. */
const derivation = new MTProtoState(undefined, new Logger(LogLevel.NONE))

export async function mintAuthKey(): Promise<AuthKey> {
  const key = new AuthKey()
  await key.setKey(randomBytes(256))
  return key
}

/** The auth_key_id a packet names (its first 8 bytes, as GramJS writes them), as the hex string keys are filed under. */
export function packetKeyId(packet: Buffer): string | null {
  if (packet.length < 8) return null
  return readBigIntFromBuffer(packet.subarray(0, 8)).toString(16)
}

export function keyIdOf(key: AuthKey): string {
  if (!key.keyId) throw new Error('beta dc: an auth key without its id')
  return key.keyId.toString(16)
}

/** Decrypts what the client sent under `key`; null when the msg_key does not match (the packet is dropped, as beta drops it). */
export async function decryptFromClient(key: AuthKey, packet: Buffer): Promise<Plain | null> {
  const raw = key.getKey()
  if (!raw || packet.length < 24 + 32 || (packet.length - 24) % 16 !== 0) return null
  const msgKey = packet.subarray(8, 24)
  const { key: aesKey, iv } = await derivation._calcKey(raw, msgKey, true)
  const plain = new IGE(aesKey, iv).decryptIge(packet.subarray(24))
  const check = (await sha256(Buffer.concat([raw.subarray(88, 88 + 32), plain]))).subarray(8, 24)
  if (!check.equals(msgKey)) return null
  // What GramJS's BinaryReader reads there: three signed longs, then two signed 32-bit ints.
  const long = (at: number) => readBigIntFromBuffer(plain.subarray(at, at + 8), true, true)
  const salt = long(0)
  const sessionId = long(8)
  const msgId = long(16)
  const seqNo = plain.readInt32LE(24)
  const length = plain.readInt32LE(28)
  if (length < 0 || length > plain.length - 32 || length % 4 !== 0) return null
  return { salt, sessionId, msgId, seqNo, body: plain.subarray(32, 32 + length) }
}

/** Encrypts one message (or container) for the client: salt, session id, msg_id, seq_no, length, body, padding. */
export async function encryptForClient(
  key: AuthKey,
  envelope: { salt: bigInt.BigInteger; sessionId: bigInt.BigInteger; msgId: bigInt.BigInteger; seqNo: number },
  body: Buffer
): Promise<Buffer> {
  const raw = key.getKey()
  if (!raw || !key.keyId) throw new Error('beta dc: encrypting without a key')
  const ints = Buffer.alloc(8)
  ints.writeInt32LE(envelope.seqNo, 0)
  ints.writeInt32LE(body.length, 4)
  const data = Buffer.concat([
    toSignedLittleBuffer(envelope.salt, 8),
    toSignedLittleBuffer(envelope.sessionId, 8),
    toSignedLittleBuffer(envelope.msgId, 8),
    ints,
    body,
  ])
  // 12 to 1024 bytes of padding, the total a multiple of 16 (MTProto 2.0).
  const pad = 12 + ((16 - ((data.length + 12) % 16)) % 16) + 16 * Math.floor(Math.random() * 4)
  const plain = Buffer.concat([data, randomBytes(pad)])
  const msgKey = (await sha256(Buffer.concat([raw.subarray(88 + 8, 88 + 8 + 32), plain]))).subarray(8, 24)
  const { key: aesKey, iv } = await derivation._calcKey(raw, msgKey, false)
  return Buffer.concat([readBufferFromBigInt(key.keyId, 8), msgKey, new IGE(aesKey, iv).encryptIge(plain)])
}
