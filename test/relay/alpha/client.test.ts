// The alpha connection lifecycle: resume, each close code, reconnect backoff, honest health, the web client version, stop and logout.
import { DEFAULT_CONNECTION_CONFIG, NewChatMessageCappingStatusType } from '@whiskeysockets/baileys'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { STABLE_CONNECTION_MS } from '../../../relay/alpha/client'
import { CONNECT_DEADLINE_MS, LIVENESS_TIMEOUT_MS, UNRESPONSIVE_AFTER_MS } from '../../../relay/alpha/health'
import { RESTRICTED_463_HOLD_MS } from '../../../relay/alpha/restriction'
import { BAD_SESSION_CLOSES_MAX, BAD_SESSION_WINDOW_MS, CLIENT_OUTDATED_CLOSES_MAX, MAX_RECONNECT_MS, MIN_RECONNECT_MS } from '../../../relay/alpha/state'
import { harness, linkedStore, OWN_LID, PHONE, settle, useFakeClock, type Harness } from './harness'

beforeEach(useFakeClock)
afterEach(() => {
  vi.useRealTimers()
})

async function connected(): Promise<Harness> {
  const h = await harness({ store: await linkedStore() })
  await h.startOpen()
  expect(h.lastState()).toMatchObject({ state: 'connected' })
  return h
}

/** The driver has opened its second socket: it opens, and the session shows connected again. */
async function secondSocketConnects(h: Harness) {
  expect(h.sockets.sockets).toHaveLength(2)
  h.sockets.latest.open()
  await settle()
  expect(h.lastState()).toMatchObject({ state: 'connected' })
}

/** A bad-session close (500): the session shows connecting, and the next socket opens after the backoff. */
async function badSessionCloseThenReopen(h: Harness) {
  h.sockets.latest.close(500, 'Stream Errored (bad-session)')
  await settle()
  expect(h.lastState()).toEqual({ state: 'connecting' })
  await vi.advanceTimersByTimeAsync(10_000)
  h.sockets.latest.open()
  await settle()
}

/** Advances in steps, answering every socket's keep-alive with a frame so the liveness watchdog stays quiet. */
async function advanceAlive(h: Harness, ms: number) {
  for (let left = ms; left > 0; left -= 5_000) {
    h.sockets.latest.frame()
    await vi.advanceTimersByTimeAsync(Math.min(5_000, left))
  }
}

describe('alpha session resume', () => {
  it('resumes a stored session without linking and reports connected with our LID', async () => {
    const h = await harness({ store: await linkedStore() })
    await h.connector.start()
    await settle()
    expect(h.states).toEqual([{ state: 'connecting' }])
    h.sockets.latest.open()
    await settle()
    expect(h.states).toEqual([{ state: 'connecting' }, { state: 'connected', identifier: PHONE, upstreamUserId: `${OWN_LID}@lid` }])
    expect(h.sockets.latest.pairingCodeRequests).toEqual([])
  })

  it('closes a stored session that belongs to another number without unlinking it', async () => {
    const h = await harness({ store: await linkedStore('4915112345678') })
    await h.connector.start()
    await settle()
    h.sockets.latest.open()
    await settle()
    expect(h.lastState()).toMatchObject({ state: 'disconnected', problem: 'logged_out', message: expect.stringContaining('+4915112345678') })
    expect(h.sockets.latest.companionRemovals).toEqual([])
    expect(h.sockets.latest.isClosed).toBe(true)
    expect(h.store.atRest.has('creds')).toBe(true)
  })
})

describe('alpha disconnects', () => {
  it('wipes the session and reports logged_out on 401, and never reconnects', async () => {
    const h = await connected()
    h.sockets.latest.close(401)
    await settle()
    expect(h.lastState()).toEqual({ state: 'disconnected', problem: 'logged_out', message: expect.stringContaining('link the number again') })
    expect(h.store.atRest.size).toBe(0)
    await vi.advanceTimersByTimeAsync(10 * MAX_RECONNECT_MS)
    expect(h.sockets.sockets).toHaveLength(1)
  })

  it.each([403, 406])('reports restricted blocked_by_alpha with no end on %i, keeps the session and stops', async (code) => {
    const h = await connected()
    h.sockets.latest.close(code, 'Connection Failure', { reason: String(code) })
    await settle()
    expect(h.lastState()).toEqual({ state: 'restricted', problem: 'blocked_by_alpha', message: expect.any(String), until: null })
    expect(h.store.atRest.has('creds')).toBe(true)
    await vi.advanceTimersByTimeAsync(10 * MAX_RECONNECT_MS)
    expect(h.sockets.sockets).toHaveLength(1)
  })

  it('reports a 402 temporary ban with its end, and reconnects when it has passed', async () => {
    const h = await connected()
    h.sockets.latest.close(402, 'Connection Failure', { reason: '402', code: '101', expire: '600' })
    await settle()
    expect(h.lastState()).toEqual({ state: 'restricted', problem: 'blocked_by_alpha', message: expect.any(String), until: Date.now() + 600_000 })
    await vi.advanceTimersByTimeAsync(599_000)
    expect(h.sockets.sockets).toHaveLength(1)
    await vi.advanceTimersByTimeAsync(1_000)
    await settle()
    await secondSocketConnects(h)
  })

  it('stops and reports replaced on 440 instead of fighting the other client', async () => {
    const h = await connected()
    h.sockets.latest.close(440, 'Stream Errored (conflict)')
    await settle()
    expect(h.lastState()).toEqual({ state: 'disconnected', problem: 'replaced', message: expect.stringContaining('Another client') })
    await vi.advanceTimersByTimeAsync(10 * MAX_RECONNECT_MS)
    expect(h.sockets.sockets).toHaveLength(1)
    expect(h.store.atRest.has('creds')).toBe(true)
  })

  it.each([408, 428, 500, 503])('shows connecting at once on %i and reconnects after the backoff', async (code) => {
    const h = await connected()
    h.sockets.latest.close(code)
    await settle()
    expect(h.lastState()).toEqual({ state: 'connecting' })
    await vi.advanceTimersByTimeAsync(MIN_RECONNECT_MS - 1)
    expect(h.sockets.sockets).toHaveLength(1)
    await vi.advanceTimersByTimeAsync(1)
    await secondSocketConnects(h)
  })

  it('opens a new socket at once on a 515 restart', async () => {
    const h = await connected()
    h.sockets.latest.close(515, 'Stream Errored (restart required)')
    await settle()
    expect(h.sockets.sockets).toHaveLength(2)
  })

  it('grows the backoff while attempts keep failing, and while a connection keeps dropping right after opening', async () => {
    const h = await connected()
    const made = () => h.sockets.sockets.length
    h.sockets.latest.close(428)
    await settle()
    for (const delay of [1_000, 2_000, 4_000]) {
      const before = made()
      await vi.advanceTimersByTimeAsync(delay - 1)
      expect(made()).toBe(before)
      await vi.advanceTimersByTimeAsync(1)
      expect(made()).toBe(before + 1)
      // Opens briefly (flapping), then drops again: the backoff keeps growing.
      h.sockets.latest.open()
      await settle()
      h.sockets.latest.close(428)
      await settle()
    }
    await vi.advanceTimersByTimeAsync(7_999)
    expect(made()).toBe(4)
    await vi.advanceTimersByTimeAsync(1)
    expect(made()).toBe(5)
  })

  it('starts the backoff over after a connection that stayed up', async () => {
    const h = await connected()
    h.sockets.latest.close(428)
    await settle()
    await vi.advanceTimersByTimeAsync(1_000)
    h.sockets.latest.open()
    await settle()
    await advanceAlive(h, STABLE_CONNECTION_MS)
    h.sockets.latest.close(428)
    await settle()
    await vi.advanceTimersByTimeAsync(1_000)
    expect(h.sockets.sockets).toHaveLength(3)
  })
})

describe('alpha health', () => {
  it('reports unresponsive when reconnecting keeps failing, keeps trying, and reports connected once it works', async () => {
    const h = await connected()
    h.sockets.latest.close(408, 'Connection was lost')
    await settle()
    let elapsed = 0
    while (elapsed < UNRESPONSIVE_AFTER_MS) {
      await vi.advanceTimersByTimeAsync(1_000)
      elapsed += 1_000
      if (!h.sockets.latest.isClosed) {
        h.sockets.latest.close(408, 'WebSocket Error (connect ETIMEDOUT)')
        await settle()
      }
    }
    expect(h.lastState()).toEqual({ state: 'disconnected', problem: 'unresponsive', message: expect.stringContaining('keeps retrying') })
    const sockets = h.sockets.sockets.length
    while (h.sockets.sockets.length === sockets) await vi.advanceTimersByTimeAsync(1_000)
    await settle()
    expect(h.lastState()).toMatchObject({ problem: 'unresponsive' })
    h.sockets.latest.open()
    await settle()
    expect(h.lastState()).toMatchObject({ state: 'connected' })
  })

  it('abandons a resume that never opens and tries again', async () => {
    const h = await harness({ store: await linkedStore() })
    await h.connector.start()
    await settle()
    await vi.advanceTimersByTimeAsync(CONNECT_DEADLINE_MS)
    await settle()
    expect(h.sockets.sockets[0]!.isClosed).toBe(true)
    expect(h.sockets.sockets[0]!.endErrors[0]?.message).toContain('connect deadline')
    await vi.advanceTimersByTimeAsync(MIN_RECONNECT_MS)
    expect(h.sockets.sockets).toHaveLength(2)
  })

  it('does not keep showing connected when alpha stops sending frames', async () => {
    const h = await connected()
    await advanceAlive(h, 5 * LIVENESS_TIMEOUT_MS)
    expect(h.sockets.sockets).toHaveLength(1)
    await vi.advanceTimersByTimeAsync(LIVENESS_TIMEOUT_MS + 10_000)
    await settle()
    expect(h.sockets.sockets[0]!.isClosed).toBe(true)
    expect(h.states.at(-1)).toEqual({ state: 'connecting' })
  })
})

describe('alpha restrictions while connected', () => {
  it('follows the reach-out time lock alpha pushes: restricted until its end, connected when lifted', async () => {
    const h = await connected()
    const ends = new Date(Date.now() + 3_600_000)
    h.sockets.latest.emit({ 'connection.update': { reachoutTimeLock: { isActive: true, timeEnforcementEnds: ends } } })
    await settle()
    expect(h.lastState()).toEqual({ state: 'restricted', problem: 'blocked_by_alpha', message: expect.any(String), until: ends.getTime() })
    h.sockets.latest.emit({ 'connection.update': { reachoutTimeLock: { isActive: false } } })
    await settle()
    expect(h.lastState()).toMatchObject({ state: 'connected' })
  })

  it('restricts the number for a day after a send is refused with 463, using the time lock end when alpha has one', async () => {
    const h = await connected()
    h.sockets.latest.nack('3EB0AAAA', 463)
    await settle()
    expect(h.receipts).toEqual([{ upstreamId: '3EB0AAAA', status: 'failed', error: expect.stringContaining('463'), code: 463 }])
    expect(h.lastState()).toEqual({ state: 'restricted', problem: 'blocked_by_alpha', message: expect.any(String), until: Date.now() + RESTRICTED_463_HOLD_MS })
    await advanceAlive(h, RESTRICTED_463_HOLD_MS)
    expect(h.lastState()).toMatchObject({ state: 'connected' })

    const ends = new Date(Date.now() + 2 * RESTRICTED_463_HOLD_MS)
    h.sockets.latest.timelock = { isActive: true, timeEnforcementEnds: ends }
    h.sockets.latest.nack('3EB0BBBB', 463)
    await settle()
    expect(h.lastState()).toMatchObject({ state: 'restricted', until: ends.getTime() })
  })

  it('keeps a 463 restriction when the time lock reports none', async () => {
    const h = await connected()
    h.sockets.latest.nack('3EB0AAAA', 463)
    await settle()
    h.sockets.latest.emit({ 'connection.update': { reachoutTimeLock: { isActive: false } } })
    await settle()
    expect(h.lastState()).toMatchObject({ state: 'restricted' })
  })

  it('reports alpha’s new-chat cap (message-capping.update) as the risk signal new_chat_cap until the cycle ends, lifted by NONE', async () => {
    const h = await connected()
    const cycleEnd = Math.floor(Date.now() / 1000) + 86_400
    // The payload as Baileys emits it: the notification's xwa2_notify_new_chat_messages_capping_info_update, as sent.
    const info = (capping_status: NewChatMessageCappingStatusType, used_quota: number) => ({
      total_quota: 100,
      used_quota,
      cycle_start_timestamp: String(cycleEnd - 7 * 86_400),
      cycle_end_timestamp: String(cycleEnd),
      server_sent_timestamp: String(Math.floor(Date.now() / 1000)),
      capping_status,
    })
    h.sockets.latest.emit({ 'message-capping.update': info(NewChatMessageCappingStatusType.FIRST_WARNING, 80) })
    await settle()
    expect(h.risks).toEqual([{ signal: 'new_chat_cap', active: true, until: cycleEnd * 1000, detail: expect.stringContaining('80 of 100') }])
    // A warning is a signal to the edge, not a restriction: the session stays connected.
    expect(h.lastState()).toMatchObject({ state: 'connected' })
    h.sockets.latest.emit({ 'message-capping.update': info(NewChatMessageCappingStatusType.CAPPED, 100) })
    h.sockets.latest.emit({ 'message-capping.update': info(NewChatMessageCappingStatusType.NONE, 0) })
    await settle()
    expect(h.risks.slice(1)).toEqual([
      { signal: 'new_chat_cap', active: true, until: cycleEnd * 1000, detail: expect.stringContaining('reached its cap') },
      { signal: 'new_chat_cap', active: false, until: null, detail: expect.any(String) },
    ])
  })

  it('reads a new-chat cap update without a status by its quota, and one with neither as nothing', async () => {
    const h = await connected()
    h.sockets.latest.emit({ 'message-capping.update': { total_quota: 50, used_quota: 50 } })
    h.sockets.latest.emit({ 'message-capping.update': { server_sent_timestamp: '1788000000' } })
    await settle()
    expect(h.risks).toEqual([{ signal: 'new_chat_cap', active: true, until: null, detail: expect.stringContaining('50 of 50') }])
  })

  it('fails a send refused for another reason without restricting the number', async () => {
    const h = await connected()
    h.sockets.latest.nack('3EB0CCCC', 479)
    await settle()
    expect(h.receipts).toEqual([{ upstreamId: '3EB0CCCC', status: 'failed', error: 'alpha refused the message (error 479)', code: 479 }])
    expect(h.lastState()).toMatchObject({ state: 'connected' })
  })
})

describe('alpha stop and logout', () => {
  it('stop closes the socket without logging out, keeps the session and does not reconnect', async () => {
    const h = await connected()
    const states = h.states.length
    await h.connector.stop()
    await settle()
    expect(h.sockets.latest.isClosed).toBe(true)
    expect(h.sockets.latest.companionRemovals).toEqual([])
    expect(h.store.atRest.has('creds')).toBe(true)
    await vi.advanceTimersByTimeAsync(10 * MAX_RECONNECT_MS)
    expect(h.sockets.sockets).toHaveLength(1)
    expect(h.states).toHaveLength(states)
  })

  it('stop leaves no timer behind, even when the socket never reports its close', async () => {
    const h = await connected()
    h.sockets.latest.end = async () => undefined
    await h.connector.stop()
    await settle()
    expect(vi.getTimerCount()).toBe(0)
  })

  it('a stopped session resumes elsewhere from the store', async () => {
    const h = await connected()
    await h.connector.stop()
    const next = await harness({ store: h.store })
    await next.startOpen()
    expect(next.lastState()).toMatchObject({ state: 'connected', identifier: PHONE })
    expect(next.sockets.latest.pairingCodeRequests).toEqual([])
  })

  it('logout unlinks the device upstream, wipes the session and reports it', async () => {
    const h = await connected()
    await h.connector.logout()
    await settle()
    expect(h.sockets.latest.companionRemovals).toEqual(['15551234567:12@s.whatsapp.net'])
    expect(h.store.atRest.size).toBe(0)
    expect(h.lastState()).toEqual({ state: 'disconnected', problem: 'logged_out', message: 'The session was logged out on request.' })
    await vi.advanceTimersByTimeAsync(10 * MAX_RECONNECT_MS)
    expect(h.sockets.sockets).toHaveLength(1)
  })

  it('logout without a connection still wipes the stored session', async () => {
    const h = await harness({ store: await linkedStore() })
    await h.connector.logout()
    expect(h.store.atRest.size).toBe(0)
    expect(h.sockets.sockets).toHaveLength(0)
  })
})

describe('alpha start', () => {
  it('opens one socket when start is called twice at once', async () => {
    const h = await harness({ store: await linkedStore() })
    await Promise.all([h.connector.start(), h.connector.start()])
    await settle()
    expect(h.sockets.sockets).toHaveLength(1)
    await h.connector.start()
    expect(h.sockets.sockets).toHaveLength(1)
  })
})

describe('alpha close codes as Baileys means them', () => {
  it('stops for good on 411 (multi-device mismatch), wipes the session and says to link again', async () => {
    const h = await connected()
    h.sockets.latest.downgradeWebclient()
    await settle()
    expect(h.lastState()).toEqual({ state: 'disconnected', problem: 'logged_out', message: expect.stringContaining('link the number again') })
    expect(h.store.atRest.size).toBe(0)
    await vi.advanceTimersByTimeAsync(10 * MAX_RECONNECT_MS)
    expect(h.sockets.sockets).toHaveLength(1)
  })

  it('tells the user on 403 to link again, not only to wait', async () => {
    const h = await connected()
    h.sockets.latest.close(403, 'Connection Failure', { reason: '403' })
    await settle()
    expect(h.lastState()).toEqual({ state: 'restricted', problem: 'blocked_by_alpha', message: expect.stringContaining('link it again'), until: null })
  })

  it('stops with "link again" when a bad session (500) keeps failing right after it opens, keeping the session', async () => {
    const h = await connected()
    for (let i = 0; i < BAD_SESSION_CLOSES_MAX - 1; i++) {
      await badSessionCloseThenReopen(h)
    }
    h.sockets.latest.close(500, 'Stream Errored (bad-session)')
    await settle()
    expect(h.lastState()).toEqual({ state: 'disconnected', problem: 'logged_out', message: expect.stringContaining('link the number again') })
    const made = h.sockets.sockets.length
    await vi.advanceTimersByTimeAsync(10 * MAX_RECONNECT_MS)
    expect(h.sockets.sockets).toHaveLength(made)
    expect(h.store.atRest.has('creds')).toBe(true)
  })

  it('keeps retrying a 500 that comes after the connection stayed up', async () => {
    const h = await connected()
    for (let i = 0; i < BAD_SESSION_CLOSES_MAX + 1; i++) {
      await advanceAlive(h, BAD_SESSION_WINDOW_MS)
      await badSessionCloseThenReopen(h)
    }
    expect(h.lastState()).toMatchObject({ state: 'connected' })
  })
})

describe('alpha web client version', () => {
  it('fetches the current version at start without waiting for it, and connects with it once known', async () => {
    const fetchVersion = vi.fn(async () => ({ version: [2, 3000, 1999999999] as [number, number, number], isLatest: true }))
    const h = await harness({ store: await linkedStore(), fetchVersion })
    await h.startOpen()
    expect(fetchVersion).toHaveBeenCalledTimes(1)
    expect(h.sockets.sockets).toHaveLength(1)
    h.sockets.latest.close(428)
    await settle()
    await vi.advanceTimersByTimeAsync(MIN_RECONNECT_MS)
    expect(h.sockets.latest.effective.version).toEqual([2, 3000, 1999999999])
  })

  it('starts even when the version fetch never answers, with the built-in version', async () => {
    const h = await harness({ store: await linkedStore(), fetchVersion: () => new Promise(() => undefined) })
    await h.startOpen()
    expect(h.lastState()).toMatchObject({ state: 'connected' })
    expect(h.sockets.latest.effective.version).toEqual(DEFAULT_CONNECTION_CONFIG.version)
  })

  it('fetches the version again on a 405, and after 405s in a row reports client_outdated, logs it and stops', async () => {
    const fetchVersion = vi.fn(async () => ({ version: DEFAULT_CONNECTION_CONFIG.version, isLatest: false }))
    const h = await harness({ store: await linkedStore(), fetchVersion, logLevel: 'info' })
    await h.connector.start()
    await settle()
    for (let i = 0; i < CLIENT_OUTDATED_CLOSES_MAX - 1; i++) {
      h.sockets.latest.failure(405)
      await settle()
      expect(h.lastState()).toEqual({ state: 'connecting' })
      await vi.advanceTimersByTimeAsync(10_000)
    }
    expect(fetchVersion).toHaveBeenCalledTimes(CLIENT_OUTDATED_CLOSES_MAX)
    h.sockets.latest.failure(405)
    await settle()
    expect(h.lastState()).toEqual({
      state: 'disconnected',
      problem: 'client_outdated',
      message: expect.stringMatching(/405.*upgrade @whiskeysockets\/baileys/),
    })
    const made = h.sockets.sockets.length
    await vi.advanceTimersByTimeAsync(10 * MAX_RECONNECT_MS)
    expect(h.sockets.sockets).toHaveLength(made)
    expect(h.logLines.some((l) => l.includes('"problem":"client_outdated"') && l.includes('405'))).toBe(true)
    expect(h.store.atRest.has('creds')).toBe(true)
  })
})

describe('alpha web client version, stopped mid-fetch', () => {
  it('does not reconnect when stopped while the version is fetched after a 405', async () => {
    let answer: (v: { version: [number, number, number]; isLatest: boolean }) => void = () => undefined
    const fetchVersion = vi.fn(() => new Promise<{ version: [number, number, number]; isLatest: boolean }>((r) => (answer = r)))
    const h = await harness({ store: await linkedStore(), fetchVersion })
    await h.startOpen()
    answer({ version: [2, 3000, 5], isLatest: false })
    await settle()
    h.sockets.latest.failure(405)
    await settle()
    await h.connector.stop()
    answer({ version: [2, 3000, 6], isLatest: true })
    await settle()
    expect(vi.getTimerCount()).toBe(0)
    await vi.advanceTimersByTimeAsync(10 * MAX_RECONNECT_MS)
    expect(h.sockets.sockets).toHaveLength(1)
  })
})

describe('alpha retry counters', () => {
  it('keeps one retry counter cache across reconnects', async () => {
    const h = await connected()
    h.sockets.latest.close(428)
    await settle()
    await vi.advanceTimersByTimeAsync(MIN_RECONNECT_MS)
    expect(h.sockets.sockets).toHaveLength(2)
    expect(h.sockets.sockets[1]!.retryCache).toBe(h.sockets.sockets[0]!.retryCache)
  })
})
