/**
 * Sealed secrets: AES-256-GCM values that must be read back (webhook signing secrets, channel credentials, the page
 * inbox's app secret and page tokens, the kept answers of idempotent requests). A value is `v2.<key id>.<iv>.<ciphertext>`, and the place it belongs to
 * (column, tenant, row) is its associated data: a value copied to another row, tenant or column does not open.
 * The key id picks the key of the keyring (config.ts `keyring`), so keys rotate while every value still opens;
 * `v1.<iv>.<ciphertext>` values from before key ids (no associated data) still open and are re-sealed by
 * POST /admin/secrets/reseal (docs/security.md, Secret rotation).
 */
import { base64urlBytes, fromBase64urlBytes } from './base64url'

/** Every sealed column, named `table.column`; part of the associated data, so a value opens only in its column. */
export const SEALED_COLUMNS = [
  'webhooks.signing_secret',
  'channel_connections.config',
  'social_apps.secret',
  'social_flows.pages',
  'social_pages.token',
  'idempotency_keys.response',
] as const
export type SealedColumn = (typeof SEALED_COLUMNS)[number]

/** Where a sealed value lives: its column, its tenant and its row's id within the tenant. */
export type SealedAt = { column: SealedColumn; tenantId: string; rowId: string }

/** The keys that may open values, by id, and the id of the one new values are sealed with. */
export type Keyring = { currentId: string; keys: ReadonlyMap<string, string> }

export const KEY_ID_PATTERN = /^[A-Za-z0-9_-]{1,32}$/

const V1 = 'v1.'
const V2 = 'v2.'
const encoder = new TextEncoder()
const keyCache = new Map<string, Promise<CryptoKey>>()

/** The AES-256-GCM key of a secret string (base64 of 32 random bytes, or any passphrase: hashed to 32 bytes). */
function aesKey(secret: string): Promise<CryptoKey> {
  let key = keyCache.get(secret)
  if (!key) {
    key = crypto.subtle.digest('SHA-256', encoder.encode(secret)).then((raw) => crypto.subtle.importKey('raw', raw, 'AES-GCM', false, ['encrypt', 'decrypt']))
    keyCache.set(secret, key)
  }
  return key
}

/** The associated data: format, key id and place, as a JSON array so no two places share an encoding. */
function associatedData(keyId: string, at: SealedAt): Uint8Array<ArrayBuffer> {
  return new Uint8Array(encoder.encode(JSON.stringify(['v2', keyId, at.column, at.tenantId, at.rowId])))
}

export async function seal(ring: Keyring, at: SealedAt, plaintext: string): Promise<string> {
  const secret = ring.keys.get(ring.currentId)
  if (secret === undefined) throw new Error(`the sealing key ${ring.currentId} is not in the keyring`)
  const iv = crypto.getRandomValues(new Uint8Array(12))
  const data = await crypto.subtle.encrypt(
    { name: 'AES-GCM', iv, additionalData: associatedData(ring.currentId, at) },
    await aesKey(secret),
    encoder.encode(plaintext)
  )
  return `${V2}${ring.currentId}.${base64urlBytes(iv)}.${base64urlBytes(new Uint8Array(data))}`
}

/** Opens a value sealed for `at` (or a v1 value, under any key of the ring); throws when it does not open. */
export async function unseal(ring: Keyring, at: SealedAt, sealed: string): Promise<string> {
  if (sealed.startsWith(V2)) {
    const [keyId, iv, data, extra] = sealed.slice(V2.length).split('.')
    if (!keyId || !iv || !data || extra !== undefined) throw new Error('malformed sealed value')
    const secret = ring.keys.get(keyId)
    if (secret === undefined) throw new Error(`sealed under key ${keyId}, which is not in the keyring (ENCRYPTION_KEYS)`)
    const plain = await crypto.subtle.decrypt(
      { name: 'AES-GCM', iv: fromBase64urlBytes(iv), additionalData: associatedData(keyId, at) },
      await aesKey(secret),
      fromBase64urlBytes(data)
    )
    return new TextDecoder().decode(plain)
  }
  if (sealed.startsWith(V1)) return unsealV1(ring, sealed)
  throw new Error('unknown sealed-value version')
}

/**
 * A value sealed before key ids existed: no associated data, under the single ENCRYPTION_KEY of the time. It is
 * tried under the key with id `default` (ENCRYPTION_KEY) first, then the others (an operator may have moved the
 * old key into ENCRYPTION_KEYS under a name); the GCM tag makes a wrong key fail, never decrypt to garbage.
 */
async function unsealV1(ring: Keyring, sealed: string): Promise<string> {
  const [iv, data, extra] = sealed.slice(V1.length).split('.')
  if (!iv || !data || extra !== undefined) throw new Error('malformed sealed value')
  const ids = [...ring.keys.keys()].sort((a, b) => (a === DEFAULT_KEY_ID ? -1 : b === DEFAULT_KEY_ID ? 1 : 0))
  for (const id of ids) {
    try {
      const plain = await crypto.subtle.decrypt(
        { name: 'AES-GCM', iv: fromBase64urlBytes(iv) },
        await aesKey(ring.keys.get(id) ?? ''),
        fromBase64urlBytes(data)
      )
      return new TextDecoder().decode(plain)
    } catch {
      // Not this key: try the next.
    }
  }
  throw new Error('a v1 sealed value opens under no key of the keyring')
}

/** The key id ENCRYPTION_KEY gets in the keyring. */
export const DEFAULT_KEY_ID = 'default'

/** True when the value is sealed in the current format under the current key (nothing for a re-seal to do). */
export function sealedWithCurrentKey(ring: Keyring, sealed: string): boolean {
  return sealed.startsWith(`${V2}${ring.currentId}.`)
}

/** The prefix every value sealed under the current key starts with (for the re-seal's SQL filter). */
export function currentPrefix(ring: Keyring): string {
  return `${V2}${ring.currentId}.`
}
