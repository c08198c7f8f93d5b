// What an alpha session keeps with its stored session at the edge, so that a restart or a failover resumes from it:
// the 463 hold (a new-chat send during the hold would reach alpha and worsen the restriction) and the recent sends
// Baileys re-encrypts for a recipient device that asks again (retry receipts).
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { RECENT_SENDS_MAX, RECENT_SENDS_TTL_MS } from '../../../relay/alpha/recent-sends'
import { RESTRICTED_463_HOLD_MS } from '../../../relay/alpha/restriction'
import type { OutboundMessage } from '../../../relay/connector'
import { harness, linkedStore, settle, useFakeClock, type Harness } from './harness'

beforeEach(useFakeClock)
afterEach(() => {
  vi.useRealTimers()
})

function message(over: Partial<OutboundMessage> = {}): OutboundMessage {
  return { messageId: 'msg_01', to: { phone: '+15550000777', peerId: null }, text: 'Yes, until 6pm.', mediaUrl: null, ...over }
}

/** The same account on a new relay process: a new connector over the store the last one left. */
async function restarted(h: Harness): Promise<Harness> {
  await h.connector.stop()
  const next = await harness({ store: h.store })
  await next.startOpen()
  return next
}

describe('alpha 463 hold across a restart', () => {
  it('keeps the hold: after a failover a new-chat send is refused before it reaches alpha, and the state says so', async () => {
    const h = await harness({ store: await linkedStore() })
    await h.startOpen()
    h.sockets.latest.nack('3EB0AAAA', 463)
    await settle()
    const until = Date.now() + RESTRICTED_463_HOLD_MS
    expect(h.lastState()).toMatchObject({ state: 'restricted', until })

    await vi.advanceTimersByTimeAsync(60 * 60 * 1000)
    const next = await restarted(h)
    expect(next.lastState()).toEqual({ state: 'restricted', problem: 'blocked_by_alpha', message: expect.any(String), until })
    await expect(next.connector.send(message({ to: { phone: '+15550000888', peerId: null } }))).rejects.toMatchObject({ code: 'account_restricted' })
    expect(next.sockets.latest.sent).toEqual([])
  })

  it('lifts a kept hold at its end, also on the relay that resumed it', async () => {
    const h = await harness({ store: await linkedStore() })
    await h.startOpen()
    h.sockets.latest.nack('3EB0AAAA', 463)
    await settle()
    const next = await restarted(h)
    for (let left = RESTRICTED_463_HOLD_MS; left > 0; left -= 5_000) {
      next.sockets.latest.frame()
      await vi.advanceTimersByTimeAsync(Math.min(5_000, left))
    }
    expect(next.lastState()).toMatchObject({ state: 'connected' })
    const third = await restarted(next)
    expect(third.lastState()).toMatchObject({ state: 'connected' })
  })
})

describe('alpha recent sends across a restart', () => {
  it('answers a retry receipt after a failover from the sends kept with the session', async () => {
    const h = await harness({ store: await linkedStore() })
    await h.startOpen()
    const { upstreamId } = await h.connector.send(message())
    const next = await restarted(h)
    const again = await next.sockets.latest.config.getMessage({ remoteJid: '15550000777@s.whatsapp.net', id: upstreamId, fromMe: true })
    expect(again).toMatchObject({ conversation: 'Yes, until 6pm.' })
  })

  it(`keeps the last ${RECENT_SENDS_MAX} sends for ${RECENT_SENDS_TTL_MS / 3_600_000} h, no more`, async () => {
    const h = await harness({ store: await linkedStore() })
    await h.startOpen()
    const ids: string[] = []
    for (let i = 0; i <= RECENT_SENDS_MAX; i++) ids.push((await h.connector.send(message({ messageId: `msg_${i}` }))).upstreamId)
    await settle()
    const kept = [...h.store.atRest.keys()].filter((k) => k.startsWith('relay/sent/'))
    expect(kept).toHaveLength(RECENT_SENDS_MAX)
    const next = await restarted(h)
    const getMessage = next.sockets.latest.config.getMessage
    expect(await getMessage({ id: ids[0] })).toBeUndefined()
    expect(await getMessage({ id: ids[1] })).toBeDefined()
    await vi.advanceTimersByTimeAsync(RECENT_SENDS_TTL_MS)
    expect(await getMessage({ id: ids.at(-1) })).toBeUndefined()
  })
})
