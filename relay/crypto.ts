/**
 * Session encryption on the relay: a session's credentials and keys leave the process only as ciphertext. Each
 * entry's name becomes a keyed MAC (the edge cannot read which keys or contacts a session has) and its value
 * AES-256-GCM with the account and the MAC as associated data (a value cannot be moved to another name or account).
 * Any relay holding the same RELAY_SESSION_KEY can read what another wrote, so sessions resume anywhere.
 */
import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto'
import { z } from 'zod'

const VERSION = 'v1'
const IV_BYTES = 12
const TAG_BYTES = 16
const Plain = z.object({ n: z.string(), v: z.string() })

function ikm(secret: string): Buffer {
  const raw = Buffer.from(secret, 'base64')
  // A base64 key of at least 32 bytes is used as is; anything else counts as a passphrase.
  return raw.length >= 32 && raw.toString('base64').replace(/=+$/, '') === secret.trim().replace(/=+$/, '') ? raw : Buffer.from(secret, 'utf8')
}

export class SessionUnreadableError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'SessionUnreadableError'
  }
}

export class SessionCrypto {
  private readonly encKey: Buffer
  private readonly macKey: Buffer

  constructor(secret: string) {
    const salt = Buffer.from('messaging-gateway relay session v1')
    this.encKey = Buffer.from(hkdfSync('sha256', ikm(secret), salt, 'enc', 32))
    this.macKey = Buffer.from(hkdfSync('sha256', ikm(secret), salt, 'mac', 32))
  }

  /** The name an entry is stored under at the edge. */
  storedName(account: string, name: string): string {
    return createHmac('sha256', this.macKey).update(`${account}\u0000${name}`).digest('base64url')
  }

  seal(account: string, name: string, value: string): { stored: string; sealed: string } {
    const stored = this.storedName(account, name)
    const iv = randomBytes(IV_BYTES)
    const cipher = createCipheriv('aes-256-gcm', this.encKey, iv)
    cipher.setAAD(Buffer.from(`${account}\u0000${stored}`))
    const body = Buffer.concat([cipher.update(JSON.stringify({ n: name, v: value }), 'utf8'), cipher.final(), cipher.getAuthTag()])
    return { stored, sealed: `${VERSION}.${iv.toString('base64url')}.${body.toString('base64url')}` }
  }

  open(account: string, stored: string, sealed: string): { name: string; value: string } {
    const [version, iv, body] = sealed.split('.')
    if (version !== VERSION || !iv || !body) throw new SessionUnreadableError('unknown session entry format')
    const data = Buffer.from(body, 'base64url')
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.encKey, Buffer.from(iv, 'base64url'))
      decipher.setAAD(Buffer.from(`${account}\u0000${stored}`))
      decipher.setAuthTag(data.subarray(data.length - TAG_BYTES))
      const plain = Buffer.concat([decipher.update(data.subarray(0, data.length - TAG_BYTES)), decipher.final()]).toString('utf8')
      const parsed = Plain.parse(JSON.parse(plain))
      return { name: parsed.n, value: parsed.v }
    } catch {
      throw new SessionUnreadableError('a stored session entry does not decrypt with this RELAY_SESSION_KEY')
    }
  }
}
