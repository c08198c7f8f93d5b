/** The grant rules without the runtime: scope order, minting never wider, expiry on an injected clock. */
import { describe, expect, it } from 'vitest'
import { accountAllowed, fullGrant, isExpired, mintFrom, scopeCovers, type KeyGrant } from '../../../worker/safety/grant'
import { withinReplyWindow } from '../../../worker/safety/reply-window'

const NOW = Date.UTC(2026, 10, 24, 12)
const HOUR = 3600_000
const grant = (g: Partial<KeyGrant>): KeyGrant => ({ ...fullGrant('key_parent'), ...g })

describe('scopeCovers', () => {
  it('orders read < reply < full', () => {
    expect(scopeCovers('full', 'reply')).toBe(true)
    expect(scopeCovers('reply', 'read')).toBe(true)
    expect(scopeCovers('reply', 'full')).toBe(false)
    expect(scopeCovers('read', 'reply')).toBe(false)
  })
})

describe('mintFrom', () => {
  it('copies the parent when nothing is asked, with a new label', () => {
    const parent = grant({ scope: 'reply', accounts: ['+15550001'], expiresAt: NOW + HOUR, replyWindowS: 600, approval: true, label: 'p' })
    const child = mintFrom(parent, { label: 'c' }, NOW)
    expect(child).toEqual({
      ok: true,
      grant: { label: 'c', scope: 'reply', accounts: ['+15550001'], expiresAt: NOW + HOUR, replyWindowS: 600, approval: true },
    })
  })

  it('lets a full key mint any narrower key', () => {
    for (const scope of ['read', 'reply', 'full'] as const) expect(mintFrom(grant({}), { scope }, NOW).ok).toBe(true)
  })

  it('never mints a wider scope', () => {
    expect(mintFrom(grant({ scope: 'reply' }), { scope: 'full' }, NOW)).toMatchObject({ ok: false, message: 'a reply key cannot mint a full key' })
    expect(mintFrom(grant({ scope: 'read' }), { scope: 'reply' }, NOW).ok).toBe(false)
    expect(mintFrom(grant({ scope: 'read' }), { scope: 'read' }, NOW).ok).toBe(true)
  })

  it('keeps the accounts within the parent’s', () => {
    const parent = grant({ accounts: ['a', 'b'] })
    expect(mintFrom(parent, { accounts: ['a'] }, NOW).ok).toBe(true)
    expect(mintFrom(parent, { accounts: ['a', 'c'] }, NOW)).toMatchObject({ ok: false, message: 'this key may not use c' })
    expect(mintFrom(parent, { accounts: null }, NOW).ok).toBe(false)
  })

  it('expires no later than the parent, and never in the past', () => {
    const parent = grant({ expiresAt: NOW + HOUR })
    expect(mintFrom(parent, { expiresAt: NOW + HOUR }, NOW).ok).toBe(true)
    expect(mintFrom(parent, { expiresAt: NOW + HOUR + 1 }, NOW).ok).toBe(false)
    expect(mintFrom(parent, { expiresAt: null }, NOW).ok).toBe(false)
    expect(mintFrom(grant({}), { expiresAt: NOW }, NOW)).toMatchObject({ ok: false, message: 'expires_at must be in the future' })
  })

  it('keeps a reply window no longer than a reply parent’s, and approval on', () => {
    expect(mintFrom(grant({ scope: 'reply', replyWindowS: 600 }), { replyWindowS: 601 }, NOW).ok).toBe(false)
    expect(mintFrom(grant({ scope: 'reply', replyWindowS: 600 }), { replyWindowS: 60 }, NOW).ok).toBe(true)
    expect(mintFrom(grant({ approval: true }), { approval: false }, NOW).ok).toBe(false)
    expect(mintFrom(grant({}), { approval: true }, NOW).ok).toBe(true)
  })
})

describe('expiry on an injected clock', () => {
  it('is live until the instant it expires, expired from then on', () => {
    const g = grant({ expiresAt: NOW })
    expect(isExpired(g, NOW - 1)).toBe(false)
    expect(isExpired(g, NOW)).toBe(true)
    expect(isExpired(grant({}), NOW + 1e12)).toBe(false)
  })
})

describe('accounts and the reply window', () => {
  it('allows every account without a list, only the listed ones with one', () => {
    expect(accountAllowed(grant({}), 'x')).toBe(true)
    expect(accountAllowed(grant({ accounts: ['a'] }), 'a')).toBe(true)
    expect(accountAllowed(grant({ accounts: ['a'] }), 'b')).toBe(false)
  })

  it('admits a person who wrote within the window, on both sides of its edge', () => {
    const g = grant({ scope: 'reply', replyWindowS: 24 * 3600 })
    expect(withinReplyWindow(NOW - 24 * HOUR, g, NOW)).toBe(true)
    expect(withinReplyWindow(NOW - 24 * HOUR - 1, g, NOW)).toBe(false)
    expect(withinReplyWindow(null, g, NOW)).toBe(false)
  })
})
