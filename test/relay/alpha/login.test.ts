// Linking a new alpha device through the driver: QR codes, the pairing code, the link window, the passkey gate.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { LINK_RETRIES_MAX } from '../../../relay/alpha/client'
import { QR_FIRST_TTL_MS, QR_NEXT_TTL_MS } from '../../../relay/alpha/login'
import { MAX_RECONNECT_MS } from '../../../relay/alpha/state'
import { sealedSessionStore } from '../../fixtures/session-store'
import { DIGITS, harness, linkedStore, OWN_LID, PHONE, settle, useFakeClock } from './harness'

beforeEach(useFakeClock)
afterEach(() => {
  vi.useRealTimers()
})

describe('alpha linking with a QR code', () => {
  it('shows each QR with its own expiry, then connects after the scan and the 515 restart', async () => {
    const h = await harness()
    await h.connector.start()
    await settle()
    expect(h.states).toEqual([{ state: 'connecting' }])

    const t0 = Date.now()
    h.sockets.latest.pairDevice(3)
    await settle()
    expect(h.lastState()).toEqual({ state: 'qr_pending', qr: expect.stringContaining('#2@ref1,'), expiresAt: t0 + QR_FIRST_TTL_MS })

    await vi.advanceTimersByTimeAsync(QR_FIRST_TTL_MS)
    h.sockets.latest.nextQr()
    await settle()
    expect(h.lastState()).toEqual({ state: 'qr_pending', qr: expect.stringContaining('#2@ref2,'), expiresAt: Date.now() + QR_NEXT_TTL_MS })

    h.sockets.latest.pairSuccess(DIGITS)
    await settle()
    expect(h.sockets.sockets).toHaveLength(2)
    expect(h.lastState()).toEqual({ state: 'connecting' })

    h.sockets.latest.open({ lid: `${OWN_LID}:12@lid` })
    await settle()
    expect(h.lastState()).toEqual({ state: 'connected', identifier: PHONE, upstreamUserId: `${OWN_LID}@lid` })
    expect(h.sockets.latest.config.auth.creds.account).toBeTruthy()
    expect(h.store.atRest.has('creds')).toBe(true)
  })

  it('ends linking as link_expired when the QR refs run out, and does not start again by itself', async () => {
    const h = await harness()
    await h.connector.start()
    await settle()
    h.sockets.latest.pairDevice(2)
    h.sockets.latest.nextQr()
    h.sockets.latest.nextQr()
    await settle()
    expect(h.lastState()).toMatchObject({ state: 'disconnected', problem: 'link_expired', message: expect.stringContaining('expired') })
    await vi.advanceTimersByTimeAsync(10 * MAX_RECONNECT_MS)
    expect(h.sockets.sockets).toHaveLength(1)
    expect(h.store.clears).toBe(1)
  })

  it('reports passkey_required when the phone demands a passkey, instead of cycling QR codes', async () => {
    const h = await harness()
    await h.connector.start()
    await settle()
    h.sockets.latest.pairDevice(6)
    await settle()
    h.sockets.latest.passkeyPrompt()
    await settle()
    expect(h.lastState()).toMatchObject({ state: 'disconnected', problem: 'passkey_required', message: expect.stringContaining('passkey') })
    expect(h.sockets.latest.isClosed).toBe(true)
    const before = h.states.length
    await vi.advanceTimersByTimeAsync(10 * MAX_RECONNECT_MS)
    expect(h.sockets.sockets).toHaveLength(1)
    expect(h.states).toHaveLength(before)
  })

  it('recognises the passkey continuation notification too', async () => {
    const h = await harness()
    await h.connector.start()
    await settle()
    h.sockets.latest.pairDevice(6)
    h.sockets.latest.passkeyPrompt('crsc_continuation')
    await settle()
    expect(h.lastState()).toMatchObject({ state: 'disconnected', problem: 'passkey_required' })
  })

  it('unlinks a device linked from another phone number and says which number linked', async () => {
    const h = await harness()
    await h.connector.start()
    await settle()
    h.sockets.latest.pairDevice(6)
    h.sockets.latest.pairSuccess('4915112345678')
    await settle()
    h.sockets.latest.open()
    await settle()
    expect(h.sockets.latest.companionRemovals).toEqual(['4915112345678:12@s.whatsapp.net'])
    expect(h.lastState()).toEqual({ state: 'disconnected', problem: 'logged_out', message: expect.stringContaining('+4915112345678') })
    expect(h.states.some((s) => s.state === 'connected')).toBe(false)
    expect(h.store.atRest.size).toBe(0)
  })

  it('starts linking over on a new socket when the link socket drops, and gives up after a few tries', async () => {
    const h = await harness()
    await h.connector.start()
    await settle()
    h.sockets.latest.pairDevice(6)
    for (let i = 1; i <= LINK_RETRIES_MAX; i++) {
      h.sockets.latest.close(503, 'Stream Errored (unavailable)')
      await settle()
      expect(h.lastState()).toEqual({ state: 'connecting' })
      await vi.advanceTimersByTimeAsync(MAX_RECONNECT_MS)
      expect(h.sockets.sockets).toHaveLength(i + 1)
      h.sockets.latest.pairDevice(6)
      await settle()
      expect(h.lastState()).toMatchObject({ state: 'qr_pending' })
    }
    h.sockets.latest.close(503)
    await settle()
    expect(h.lastState()).toMatchObject({ state: 'disconnected', problem: 'unresponsive' })
  })
})

describe('alpha linking with a pairing code', () => {
  it('requests one 8-character code on the first QR event only, valid until the link window ends', async () => {
    const h = await harness({ linkMethod: 'pairing_code' })
    await h.connector.start()
    await settle()
    const t0 = Date.now()
    h.sockets.latest.pairDevice(4)
    await settle()
    h.sockets.latest.nextQr()
    h.sockets.latest.nextQr()
    await settle()
    expect(h.sockets.latest.pairingCodeRequests).toEqual([DIGITS])
    const codes = h.states.filter((s) => s.state === 'pairing_code')
    expect(codes).toEqual([
      { state: 'pairing_code', code: expect.stringMatching(/^[1-9A-HJ-NP-TV-Z]{8}$/), expiresAt: t0 + QR_FIRST_TTL_MS + 3 * QR_NEXT_TTL_MS },
    ])
    expect(h.states.some((s) => s.state === 'qr_pending')).toBe(false)
  })

  it('connects after the code is entered on the phone', async () => {
    const h = await harness({ linkMethod: 'pairing_code' })
    await h.connector.start()
    await settle()
    h.sockets.latest.pairDevice(6)
    await settle()
    h.sockets.latest.pairSuccess(DIGITS)
    await settle()
    h.sockets.latest.open()
    await settle()
    expect(h.lastState()).toMatchObject({ state: 'connected', identifier: PHONE })
    expect(h.sockets.sockets[1]!.pairingCodeRequests).toEqual([])
  })

  it('discards a half-finished pairing (code requested, never confirmed) before linking again', async () => {
    const store = sealedSessionStore()
    const first = await harness({ linkMethod: 'pairing_code', store })
    await first.connector.start()
    await settle()
    first.sockets.latest.pairDevice(6)
    await settle()
    await first.connector.stop()
    expect(store.atRest.has('creds')).toBe(true)

    const second = await harness({ linkMethod: 'pairing_code', store })
    await second.connector.start()
    await settle()
    expect(second.sockets.latest.config.auth.creds.me).toBeUndefined()
    expect(store.clears).toBe(1)
    second.sockets.latest.pairDevice(6)
    await settle()
    expect(second.lastState()).toMatchObject({ state: 'pairing_code' })
  })
})

describe('alpha force_new', () => {
  it('discards a stored session and links from scratch', async () => {
    const store = await linkedStore()
    const h = await harness({ store, forceNew: true })
    await h.connector.start()
    await settle()
    expect(store.clears).toBe(1)
    h.sockets.latest.pairDevice(6)
    await settle()
    expect(h.lastState()).toMatchObject({ state: 'qr_pending' })
  })
})
