import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { SESSION_KEY } from '../../../relay/beta/client'
import { LOGIN_WINDOW_MS, MAX_CODE_ATTEMPTS, QR_REFRESH_LEAD_MS } from '../../../relay/beta/login'
import { CODE_TTL_MS, FakeBetaNetwork, TOKEN_TTL_S } from '../../fixtures/beta-network'
import { betaHarness, PHONE, settle, useFakeClock } from './harness'

const OTHER = '+15551230009'

function network(opts: { password?: string; hint?: string; dc?: number; banned?: boolean; unknown?: boolean } = {}) {
  const net = new FakeBetaNetwork()
  if (!opts.unknown)
    net.addAccount(PHONE, {
      firstName: 'Owner',
      username: 'owner',
      password: opts.password ?? null,
      hint: opts.hint ?? null,
      dc: opts.dc ?? 2,
      banned: opts.banned ?? false,
    })
  return net
}

// Password steps run SRP (PBKDF2, 100k iterations, on both sides) on a shared CPU: generous per-test time.
describe('beta login by code', { timeout: 30_000 }, () => {
  beforeEach(useFakeClock)
  afterEach(() => vi.useRealTimers())

  it('sends a code, then connects with it and saves the session before reporting connected', async () => {
    const h = await betaHarness({ net: network() })
    await h.connector.start()
    expect(h.states.map((s) => s.state)).toEqual(['connecting', 'code_required'])
    expect(h.net.calls).toEqual(['auth.SendCode'])
    const code = h.net.codeFor(PHONE)
    const outcome = await h.connector.login!({ kind: 'code', code })
    const me = h.net.account(PHONE)
    expect(outcome).toEqual({ status: 'connected', userId: me.userId, username: 'owner' })
    expect(h.last()).toEqual({ state: 'connected', identifier: PHONE, upstreamUserId: me.userId })
    expect(h.store.writes.some((w) => w.get(SESSION_KEY)?.startsWith('1fake:'))).toBe(true)
  })

  it('asks for the two-step password after the code, then connects with the SRP proof of the right password', async () => {
    const h = await betaHarness({ net: network({ password: 'correct horse', hint: 'horse' }) })
    await h.connector.start()
    const first = await h.connector.login!({ kind: 'code', code: h.net.codeFor(PHONE) })
    expect(first).toEqual({ status: 'password_required', hint: 'horse' })
    expect(h.last()).toMatchObject({ state: 'password_required', hint: 'horse' })
    const done = await h.connector.login!({ kind: 'password', password: 'correct horse' })
    expect(done).toMatchObject({ status: 'connected', userId: h.net.account(PHONE).userId })
    expect(h.net.calls).toContain('auth.CheckPassword')
  })

  it('refuses a wrong password with password_invalid and keeps the login open for another try', async () => {
    const h = await betaHarness({ net: network({ password: 'right' }) })
    await h.connector.start()
    await h.connector.login!({ kind: 'code', code: h.net.codeFor(PHONE) })
    expect(await h.connector.login!({ kind: 'password', password: 'wrong' })).toMatchObject({ status: 'refused', error: 'password_invalid' })
    expect(await h.connector.login!({ kind: 'password', password: 'right' })).toMatchObject({ status: 'connected' })
  })

  it('refuses a wrong code with code_invalid, keeps the login, and ends it after too many wrong codes', async () => {
    const h = await betaHarness({ net: network() })
    await h.connector.start()
    expect(await h.connector.login!({ kind: 'code', code: '00000' })).toMatchObject({ status: 'refused', error: 'code_invalid' })
    expect(h.last()?.state).toBe('code_required')
    for (let i = 2; i < MAX_CODE_ATTEMPTS; i++) await h.connector.login!({ kind: 'code', code: '00000' })
    expect(await h.connector.login!({ kind: 'code', code: '00000' })).toMatchObject({ status: 'refused', error: 'too_many_attempts' })
    await settle()
    expect(h.last()).toMatchObject({ state: 'disconnected', problem: 'too_many_attempts' })
    expect(await h.connector.login!({ kind: 'code', code: h.net.codeFor(PHONE) })).toMatchObject({ error: 'no_login_pending' })
  })

  it('answers an expired code with code_expired and sends a fresh code, which then works', async () => {
    const h = await betaHarness({ net: network() })
    await h.connector.start()
    const old = h.net.codeFor(PHONE)
    vi.advanceTimersByTime(CODE_TTL_MS + 1)
    expect(await h.connector.login!({ kind: 'code', code: old })).toMatchObject({ status: 'refused', error: 'code_expired' })
    const fresh = h.net.codeFor(PHONE)
    expect(fresh).not.toBe(old)
    expect(h.net.calls.filter((c) => c === 'auth.SendCode')).toHaveLength(2)
    expect(await h.connector.login!({ kind: 'code', code: fresh })).toMatchObject({ status: 'connected' })
  })

  it('reports too_many_attempts with the wait when beta flood-waits a code, and the login goes on', async () => {
    const h = await betaHarness({ net: network() })
    await h.connector.start()
    h.net.floodNext('auth.SignIn', 120)
    expect(await h.connector.login!({ kind: 'code', code: '11111' })).toEqual(
      expect.objectContaining({ status: 'refused', error: 'too_many_attempts', retryAfterS: 120 })
    )
    expect(await h.connector.login!({ kind: 'code', code: h.net.codeFor(PHONE) })).toMatchObject({ status: 'connected' })
  })

  it('reports a number without an account as unknown_number', async () => {
    const h = await betaHarness({ net: network({ unknown: true }) })
    await h.connector.start()
    const outcome = await h.connector.login!({ kind: 'code', code: h.net.codeFor(PHONE) })
    expect(outcome).toMatchObject({ status: 'refused', error: 'unknown_number' })
    await settle()
    expect(h.last()).toMatchObject({ state: 'disconnected', problem: 'unknown_number' })
  })

  it('reports a banned number as restricted (blocked_by_beta) without a login', async () => {
    const h = await betaHarness({ net: network({ banned: true }) })
    await h.connector.start()
    await settle()
    expect(h.last()).toMatchObject({ state: 'restricted', problem: 'blocked_by_beta' })
    expect(await h.connector.login!({ kind: 'code', code: '12345' })).toMatchObject({ error: 'no_login_pending' })
  })

  it('gives a login up when its window (about 30 minutes) passes', async () => {
    const h = await betaHarness({ net: network() })
    await h.connector.start()
    vi.advanceTimersByTime(LOGIN_WINDOW_MS + 1)
    await settle()
    expect(h.last()).toMatchObject({ state: 'disconnected', problem: 'link_expired' })
  })

  it('never writes a code or password to the log', async () => {
    const h = await betaHarness({ net: network({ password: 'sup3r-s3cret-pw' }) })
    await h.connector.start()
    const code = h.net.codeFor(PHONE)
    await h.connector.login!({ kind: 'code', code: '99999' })
    await h.connector.login!({ kind: 'code', code })
    await h.connector.login!({ kind: 'password', password: 'wrong-pw-guess' })
    await h.connector.login!({ kind: 'password', password: 'sup3r-s3cret-pw' })
    const log = h.logLines.join('\n')
    expect(log.length).toBeGreaterThan(0)
    for (const secret of [code, '99999', 'wrong-pw-guess', 'sup3r-s3cret-pw']) expect(log).not.toContain(secret)
  })
})

describe('beta login by QR', { timeout: 30_000 }, () => {
  beforeEach(useFakeClock)
  afterEach(() => vi.useRealTimers())

  it('shows tg://login with the token, replaces it before it expires, and connects when a device accepts it', async () => {
    const h = await betaHarness({ net: network(), linkMethod: 'qr' })
    await h.connector.start()
    const first = h.last()
    expect(first).toMatchObject({ state: 'qr_pending', qr: expect.stringMatching(/^tg:\/\/login\?token=[A-Za-z0-9_-]{43}$/) })
    if (first?.state !== 'qr_pending') throw new Error('no QR')
    expect(first.expiresAt).toBe(Date.now() + TOKEN_TTL_S * 1000)
    vi.advanceTimersByTime(TOKEN_TTL_S * 1000 - QR_REFRESH_LEAD_MS)
    await settle()
    const second = h.last()
    expect(second?.state).toBe('qr_pending')
    expect(second).not.toEqual(first)
    h.net.scanQr(PHONE)
    await settle()
    expect(h.last()).toMatchObject({ state: 'connected', upstreamUserId: h.net.account(PHONE).userId })
  })

  it('refuses a QR accepted in the app of another number: logs that authorization out, keeps no session, reports wrong_number', async () => {
    const net = network()
    const other = net.addAccount(OTHER, { firstName: 'Someone', username: 'someone' })
    const h = await betaHarness({ net, linkMethod: 'qr' })
    await h.connector.start()
    net.scanQr(OTHER, PHONE)
    await settle()
    expect(h.last()).toMatchObject({ state: 'disconnected', problem: 'wrong_number', message: expect.stringContaining(PHONE) })
    expect(h.states.some((s) => s.state === 'connected')).toBe(false)
    expect(net.calls).toContain('auth.LogOut')
    expect(net.liveSessions(other)).toEqual([])
    expect(h.store.writes.some((w) => w.has(SESSION_KEY))).toBe(false)
    expect(h.store.clears).toBeGreaterThan(0)
    expect(h.net.clients.at(-1)!.destroyed).toBe(true)
  })

  it('checks the number after the two-step password of a QR login too', async () => {
    const net = network()
    net.addAccount(OTHER, { password: 'pw' })
    const h = await betaHarness({ net, linkMethod: 'qr' })
    await h.connector.start()
    net.scanQr(OTHER, PHONE)
    await settle()
    expect(h.last()).toMatchObject({ state: 'password_required' })
    expect(await h.connector.login!({ kind: 'password', password: 'pw' })).toMatchObject({ status: 'refused', error: 'login_failed' })
    await settle()
    expect(h.last()).toMatchObject({ state: 'disconnected', problem: 'wrong_number' })
    expect(net.calls).toContain('auth.LogOut')
  })

  it('follows a data-center migration: switches DC and imports the token', async () => {
    const h = await betaHarness({ net: network({ dc: 4 }), linkMethod: 'qr' })
    await h.connector.start()
    h.net.scanQr(PHONE)
    await settle()
    // Live: the address book, then the update state the session starts from.
    expect(h.net.calls).toEqual([
      'auth.ExportLoginToken',
      'auth.ExportLoginToken',
      'switchDC:4',
      'auth.ImportLoginToken',
      'contacts.GetContacts',
      'updates.GetState',
    ])
    expect(h.last()).toMatchObject({ state: 'connected' })
  })

  it('asks for the two-step password after the QR is accepted, and connects with it', async () => {
    const h = await betaHarness({ net: network({ password: 'pw', hint: 'pet' }), linkMethod: 'qr' })
    await h.connector.start()
    h.net.scanQr(PHONE)
    await settle()
    expect(h.last()).toMatchObject({ state: 'password_required', hint: 'pet' })
    // No more QR refreshes once the password is asked for.
    const count = h.states.length
    vi.advanceTimersByTime(TOKEN_TTL_S * 1000 * 3)
    await settle()
    expect(h.states).toHaveLength(count)
    expect(await h.connector.login!({ kind: 'password', password: 'pw' })).toMatchObject({ status: 'connected' })
  })

  it('refuses a code step during a QR login', async () => {
    const h = await betaHarness({ net: network(), linkMethod: 'qr' })
    await h.connector.start()
    expect(await h.connector.login!({ kind: 'code', code: '12345' })).toMatchObject({ status: 'refused', error: 'no_login_pending' })
  })
})

describe('beta session resume', () => {
  beforeEach(useFakeClock)
  afterEach(() => vi.useRealTimers())

  it('resumes a stored session in a new process without a login', async () => {
    const net = network()
    const h = await betaHarness({ net })
    await h.connector.start()
    await h.connector.login!({ kind: 'code', code: net.codeFor(PHONE) })
    await h.connector.stop()
    const again = await betaHarness({ net, store: h.store })
    await again.connector.start()
    await settle()
    expect(again.states.map((s) => s.state)).toEqual(['connecting', 'connected'])
    expect(net.calls.filter((c) => c === 'auth.SendCode')).toHaveLength(1)
  })

  it('wipes a stored session beta no longer knows and reports logged_out', async () => {
    const net = network()
    const h = await betaHarness({ net })
    await h.connector.start()
    await h.connector.login!({ kind: 'code', code: net.codeFor(PHONE) })
    await h.connector.stop()
    net.revoke(net.account(PHONE))
    const again = await betaHarness({ net, store: h.store })
    await again.connector.start()
    await settle()
    expect(again.last()).toMatchObject({ state: 'disconnected', problem: 'logged_out' })
    expect(h.store.clears).toBeGreaterThan(0)
  })
})
