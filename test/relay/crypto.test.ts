/** The credential encryption round trip with Baileys' own serialisation (BufferJSON), as the alpha driver stores it. */
import { BufferJSON, initAuthCreds } from '@whiskeysockets/baileys'
import { describe, expect, it } from 'vitest'
import { SessionCrypto, SessionUnreadableError } from '../../relay/crypto'

const KEY = Buffer.alloc(32, 7).toString('base64')
const ACCOUNT = 'ten_1/+15551234567'

describe('SessionCrypto', () => {
  it('round-trips Baileys creds serialised with BufferJSON, keys and all', () => {
    const creds = initAuthCreds()
    const plain = JSON.stringify(creds, BufferJSON.replacer)
    const c = new SessionCrypto(KEY)
    const { stored, sealed } = c.seal(ACCOUNT, 'creds', plain)
    const other = new SessionCrypto(KEY)
    const back = other.open(ACCOUNT, stored, sealed)
    expect(back.name).toBe('creds')
    const revived = JSON.parse(back.value, BufferJSON.reviver) as typeof creds
    expect(Buffer.isBuffer(revived.noiseKey.private)).toBe(true)
    expect(Buffer.compare(Buffer.from(revived.noiseKey.private), Buffer.from(creds.noiseKey.private))).toBe(0)
    expect(Buffer.compare(Buffer.from(revived.signedIdentityKey.public), Buffer.from(creds.signedIdentityKey.public))).toBe(0)
    expect(revived.registrationId).toBe(creds.registrationId)
  })

  it('shows the edge neither names nor values', () => {
    const c = new SessionCrypto(KEY)
    const { stored, sealed } = c.seal(ACCOUNT, 'session-447700900123@s.whatsapp.net', 'secret-material')
    expect(stored).not.toContain('447700900123')
    expect(sealed).not.toContain('secret')
    expect(sealed).toMatch(/^v1\./)
    // Same name, same stored name (updates overwrite); a fresh IV every time.
    expect(c.seal(ACCOUNT, 'session-447700900123@s.whatsapp.net', 'x').stored).toBe(stored)
    expect(c.seal(ACCOUNT, 'k', 'v').sealed).not.toBe(c.seal(ACCOUNT, 'k', 'v').sealed)
  })

  it('refuses another RELAY_SESSION_KEY', () => {
    const { stored, sealed } = new SessionCrypto(KEY).seal(ACCOUNT, 'creds', '{}')
    expect(() => new SessionCrypto(Buffer.alloc(32, 8).toString('base64')).open(ACCOUNT, stored, sealed)).toThrow(SessionUnreadableError)
  })

  it('refuses a value moved to another account or another name', () => {
    const c = new SessionCrypto(KEY)
    const a = c.seal(ACCOUNT, 'creds', '{}')
    const b = c.seal(ACCOUNT, 'other', '{}')
    expect(() => c.open('ten_2/+15550000000', a.stored, a.sealed)).toThrow(SessionUnreadableError)
    expect(() => c.open(ACCOUNT, b.stored, a.sealed)).toThrow(SessionUnreadableError)
  })

  it('accepts a passphrase as well as a base64 key', () => {
    const c = new SessionCrypto('correct horse battery staple, long enough')
    const { stored, sealed } = c.seal(ACCOUNT, 'n', 'v')
    expect(c.open(ACCOUNT, stored, sealed)).toEqual({ name: 'n', value: 'v' })
  })
})
