/**
 * Sealed values (worker/lib/sealed.ts) and the keyring that opens them (worker/config.ts `keyring`): a value opens
 * only in its own column, tenant and row; it names its key, so keys rotate; values sealed before key ids (v1,
 * produced by the previous code and pasted here) still open.
 */
import { describe, expect, it } from 'vitest'
import { keyring } from '../../../worker/config'
import { seal, unseal, type Keyring, type SealedAt } from '../../../worker/lib/sealed'

const ring = (keys: Record<string, string>, currentId: string): Keyring => ({ currentId, keys: new Map(Object.entries(keys)) })
const K1 = ring({ k1: 'first-key-material' }, 'k1')
const at: SealedAt = { column: 'webhooks.signing_secret', tenantId: 'ten_a', rowId: 'wh_1' }

/** What the previous `seal('test-encryption-key', …)` wrote (v1: no key id, no associated data). */
const V1_SEALED = 'v1.SMT6dXh6Vj0rsRs_.pHH3l0R4bdXKu0wc9_yLR9No2gFcQWZcZQnGx9a8Oww-eVmKSGGa3TQ1hWIYyETE'
const V1_PLAIN = 'whsec_fromBeforeKeyIds0123456789'
/** The same code under another passphrase (an operator who moved the old key into ENCRYPTION_KEYS). */
const V1_OTHER_KEY = 'v1.Yj9heBRtsZiIEaG7.jDKjn2ZbrJUtE9Pki45J9m7XQO5ZqMRgvx1RaImyEzg5kQpIXHWHUig4HuAulBTP36dIopYpAFCp7DsCxKqXG2-bY9HFDT8BVa4zeZ3Z'

describe('seal / unseal', () => {
  it('round-trips a secret as v2.<key id>.…, never showing it, with a fresh IV each time', async () => {
    const secret = 'https://bridge.example.com/hook?token=s3cret'
    const sealed = await seal(K1, at, secret)
    expect(sealed).toMatch(/^v2\.k1\.[\w-]+\.[\w-]+$/)
    expect(sealed).not.toContain('s3cret')
    expect(await unseal(K1, at, sealed)).toBe(secret)
    expect(await seal(K1, at, secret)).not.toBe(sealed)
  })

  it('refuses a value copied to another row, tenant or column (associated data)', async () => {
    const sealed = await seal(K1, at, 'whsec_bound')
    await expect(unseal(K1, { ...at, rowId: 'wh_2' }, sealed)).rejects.toThrow()
    await expect(unseal(K1, { ...at, tenantId: 'ten_b' }, sealed)).rejects.toThrow()
    await expect(unseal(K1, { ...at, column: 'social_pages.token' }, sealed)).rejects.toThrow()
  })

  it('refuses a relabelled key id, a tampered ciphertext, a missing key and malformed values', async () => {
    const both = ring({ k1: 'first-key-material', k2: 'first-key-material' }, 'k1')
    const sealed = await seal(both, at, 'hello')
    // Same key material under another id: the id is in the associated data, so it still fails.
    await expect(unseal(both, at, sealed.replace('v2.k1.', 'v2.k2.'))).rejects.toThrow()
    const [v, kid, iv, data] = sealed.split('.')
    const flipped = `${v}.${kid}.${iv}.${data!.slice(0, -2)}${data!.at(-2) === 'A' ? 'B' : 'A'}${data!.at(-1)}`
    await expect(unseal(both, at, flipped)).rejects.toThrow()
    await expect(unseal(ring({ k9: 'x' }, 'k9'), at, sealed)).rejects.toThrow(/k1, which is not in the keyring/)
    await expect(unseal(K1, at, `v9.${iv}.${data}`)).rejects.toThrow(/version/)
    await expect(unseal(K1, at, 'v2.k1.only-one')).rejects.toThrow(/malformed/)
  })

  it('opens values sealed by the previous format (v1) under ENCRYPTION_KEY, or any key of the ring', async () => {
    const legacy = keyring(envWith({ ENCRYPTION_KEY: 'test-encryption-key' }))
    expect(await unseal(legacy, at, V1_SEALED)).toBe(V1_PLAIN)
    const moved = keyring(envWith({ ENCRYPTION_KEYS: 'new:fresh-material,old:an-old-passphrase', ENCRYPTION_KEY_ID: 'new' }))
    expect(JSON.parse(await unseal(moved, at, V1_OTHER_KEY))).toEqual({ webhook_url: 'https://bridge.example.com/hook?token=s3cret' })
    await expect(unseal(K1, at, V1_SEALED)).rejects.toThrow(/no key/)
  })
})

function envWith(vars: Partial<Record<'ENCRYPTION_KEY' | 'ENCRYPTION_KEYS' | 'ENCRYPTION_KEY_ID', string>>): Env {
  return { ENCRYPTION_KEY: '', ENCRYPTION_KEYS: '', ENCRYPTION_KEY_ID: '', ...vars } as unknown as Env
}

describe('keyring (ENCRYPTION_KEY, ENCRYPTION_KEYS, ENCRYPTION_KEY_ID)', () => {
  it('keeps ENCRYPTION_KEY alone working: it is the key `default`, and seals', () => {
    const r = keyring(envWith({ ENCRYPTION_KEY: 'only' }))
    expect(r.currentId).toBe('default')
    expect([...r.keys]).toEqual([['default', 'only']])
  })

  it('adds ENCRYPTION_KEYS beside it and seals with ENCRYPTION_KEY_ID', () => {
    const r = keyring(envWith({ ENCRYPTION_KEY: 'old', ENCRYPTION_KEYS: ' k2:bmV3LWtleQ== , k3:third ', ENCRYPTION_KEY_ID: 'k2' }))
    expect(r.currentId).toBe('k2')
    expect(Object.fromEntries(r.keys)).toEqual({ k2: 'bmV3LWtleQ==', k3: 'third', default: 'old' })
  })

  it('seals with the only key when ENCRYPTION_KEYS holds one and nothing else is set', () => {
    expect(keyring(envWith({ ENCRYPTION_KEYS: 'k7:material' })).currentId).toBe('k7')
  })

  it('refuses a configuration that does not say which key seals, or names a missing one, or is malformed', () => {
    expect(() => keyring(envWith({}))).toThrow(/ENCRYPTION_KEY is not set/)
    expect(() => keyring(envWith({ ENCRYPTION_KEYS: 'a:1,b:2' }))).toThrow(/ENCRYPTION_KEY_ID must name/)
    expect(() => keyring(envWith({ ENCRYPTION_KEY: 'x', ENCRYPTION_KEY_ID: 'k2' }))).toThrow(/k2, which is not in/)
    expect(() => keyring(envWith({ ENCRYPTION_KEYS: 'no-colon' }))).toThrow(/kid:secret/)
    expect(() => keyring(envWith({ ENCRYPTION_KEYS: 'bad.id:x' }))).toThrow(/kid:secret/)
    expect(() => keyring(envWith({ ENCRYPTION_KEYS: 'a:1,a:2', ENCRYPTION_KEY_ID: 'a' }))).toThrow(/twice/)
    expect(() => keyring(envWith({ ENCRYPTION_KEY: 'x', ENCRYPTION_KEYS: 'default:y' }))).toThrow(/differs/)
  })
})
