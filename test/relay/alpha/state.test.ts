// The disconnect classifier and the reconnect backoff of the alpha driver.
import { describe, expect, it } from 'vitest'
import { classifyClose, closeRule, isLinkWindowEnd, MAX_RECONNECT_MS, MIN_RECONNECT_MS, reconnectDelayMs } from '../../../relay/alpha/state'
import { boom } from '../../fixtures/alpha-socket'

const NOW = 1_800_000_000_000

describe('classifyClose', () => {
  it('reads 401 as logged out, 440 as replaced and 515 as a restart', () => {
    expect(classifyClose(boom(401, 'Connection Failure'), NOW)).toEqual({ kind: 'logged_out' })
    expect(classifyClose(boom(440, 'Stream Errored (conflict)'), NOW)).toEqual({ kind: 'replaced' })
    expect(classifyClose(boom(515, 'Stream Errored (restart required)'), NOW)).toEqual({ kind: 'restart' })
  })

  it('reads 403 and 406 as an open-ended restriction and 402 as one that ends after `expire` seconds', () => {
    expect(classifyClose(boom(403, 'Connection Failure', { reason: '403' }), NOW)).toEqual({ kind: 'restricted', until: null })
    expect(classifyClose(boom(406, 'Connection Failure', { reason: '406' }), NOW)).toEqual({ kind: 'restricted', until: null })
    expect(classifyClose(boom(402, 'Connection Failure', { reason: '402', code: '101', expire: '3600' }), NOW)).toEqual({
      kind: 'restricted',
      until: NOW + 3_600_000,
    })
    expect(classifyClose(boom(402, 'Connection Failure', { reason: '402' }), NOW)).toEqual({ kind: 'restricted', until: null })
  })

  it('retries on network, keep-alive, server and unknown codes', () => {
    for (const code of [408, 428, 500, 503, 411, 405, 499]) expect(classifyClose(boom(code, 'x'), NOW)).toEqual({ kind: 'retry' })
    expect(classifyClose(new Error('no status'), NOW)).toEqual({ kind: 'retry' })
    expect(classifyClose(undefined, NOW)).toEqual({ kind: 'retry' })
  })

  it('never ends a session over a WebSocket handshake status, which says nothing about the account', () => {
    expect(classifyClose(boom(401, 'WebSocket Error (Unexpected server response: 401)'), NOW)).toEqual({ kind: 'retry' })
    expect(classifyClose(boom(403, 'WebSocket Error (Unexpected server response: 403)'), NOW)).toEqual({ kind: 'retry' })
  })

  it('gives 411, 405 and 500 their own rules, but never for a WebSocket handshake status', () => {
    expect(closeRule(boom(411, 'Multi-device beta not joined'))).toBe('multidevice_mismatch')
    expect(closeRule(boom(405, 'Connection Failure', { reason: '405' }))).toBe('client_outdated')
    expect(closeRule(boom(500, 'Stream Errored (bad-session)'))).toBe('bad_session')
    expect(closeRule(boom(405, 'WebSocket Error (Unexpected server response: 405)'))).toBeNull()
    for (const code of [408, 428, 503, 499]) expect(closeRule(boom(code, 'x'))).toBeNull()
    expect(closeRule(undefined)).toBeNull()
  })

  it('recognises the end of the link window (QR refs ran out) but not other timeouts', () => {
    expect(isLinkWindowEnd(boom(408, 'QR refs attempts ended'))).toBe(true)
    expect(isLinkWindowEnd(boom(408, 'Connection was lost'))).toBe(false)
    expect(isLinkWindowEnd(boom(428, 'QR refs attempts ended'))).toBe(false)
  })
})

describe('reconnectDelayMs', () => {
  it('grows exponentially from the minimum and stops at the cap', () => {
    const mid = () => 0.5
    expect(reconnectDelayMs(1, mid)).toBe(MIN_RECONNECT_MS)
    expect(reconnectDelayMs(2, mid)).toBe(2 * MIN_RECONNECT_MS)
    expect(reconnectDelayMs(5, mid)).toBe(16 * MIN_RECONNECT_MS)
    expect(reconnectDelayMs(40, mid)).toBe(MAX_RECONNECT_MS)
  })

  it('moves each delay by at most a quarter either way, never below the minimum or above the cap', () => {
    expect(reconnectDelayMs(4, () => 0)).toBe(6_000)
    expect(reconnectDelayMs(4, () => 0.999999)).toBe(10_000)
    expect(reconnectDelayMs(1, () => 0)).toBe(MIN_RECONNECT_MS)
    expect(reconnectDelayMs(40, () => 0.999999)).toBe(MAX_RECONNECT_MS)
  })
})
