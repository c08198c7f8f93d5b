import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { HEALTH_TIMING, PROBE_INTERVAL_MS } from '../../../relay/beta/health'
import { loggedIn, settle, useFakeClock } from './harness'

const { probeRetryMs } = HEALTH_TIMING

describe('beta session health', () => {
  beforeEach(useFakeClock)
  afterEach(() => vi.useRealTimers())

  it('rebuilds a client GramJS gave up on, reports unresponsive at the second failed probe, and connected once one answers', async () => {
    const h = await loggedIn()
    const client = h.net.clients.at(-1)!
    const before = client.connects
    // The network goes away and GramJS stops trying; the first two rebuilds cannot connect either.
    h.net.failNext('connect', () => new Error('connect ECONNREFUSED'))
    h.net.failNext('connect', () => new Error('connect ECONNREFUSED'))
    client.drop()
    await settle()
    vi.advanceTimersByTime(PROBE_INTERVAL_MS)
    await settle()
    expect(h.last()).toMatchObject({ state: 'connected' })
    vi.advanceTimersByTime(probeRetryMs)
    await settle()
    expect(h.last()).toMatchObject({ state: 'disconnected', problem: 'unresponsive' })
    vi.advanceTimersByTime(probeRetryMs)
    await settle()
    expect(client.connects).toBe(before + 1)
    vi.advanceTimersByTime(probeRetryMs)
    await settle()
    expect(h.last()).toMatchObject({ state: 'connected' })
    // Back: what passed meanwhile is fetched.
    expect(h.net.calls.filter((c) => c === 'updates.GetDifference').length).toBeGreaterThan(0)
  })

  it('fetches what it missed when a probe shows the server ahead of the session', async () => {
    const h = await loggedIn()
    const client = h.net.clients.at(-1)!
    // An update the session never received (pushed to nobody): only the probe can tell.
    h.net.account('+15551230001').withhold = 1
    h.net.write('+15551230002', '+15551230001', 'missed')
    await settle()
    expect(h.inbound).toEqual([])
    vi.advanceTimersByTime(PROBE_INTERVAL_MS)
    await settle()
    expect(h.inbound.map((m) => m.text)).toEqual(['missed'])
    expect(client.connects).toBe(1)
  })
})
