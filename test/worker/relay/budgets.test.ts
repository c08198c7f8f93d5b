/**
 * What one relay token may hold in the hub (issue 14 §2): live links, sessions named in a hello, and inbound frames
 * buffered per session while the AccountDO commits the previous batch.
 */
import { afterEach, describe, expect, it, onTestFinished, vi } from 'vitest'
import { FRAME_PROTOCOL_VERSION, PING_TEXT, type FrameOf } from '../../../schema/frames'
import { AccountObject } from '../../../worker/account/account-do'
import { HELLO_SESSIONS_MAX, INBOUND_BUFFER_MAX, RELAY_LINKS_PER_TOKEN } from '../../../worker/relay/budgets'
import { closeRelaysAfterEach, FakeRelay, issueRelay, linkedAlphaAccount, relayConnect } from '../relay-helpers'

const relays = closeRelaysAfterEach()

describe('relay token budgets', () => {
  it(`accepts ${RELAY_LINKS_PER_TOKEN} live links per token and answers the next with 429`, async () => {
    const { token } = await issueRelay()
    for (let i = 0; i < RELAY_LINKS_PER_TOKEN; i++) relays.push(await FakeRelay.open(token))
    const refused = await relayConnect(token)
    expect(refused.status).toBe(429)
    expect(refused.headers.get('Retry-After')).toBe('10')
    // Another token is not affected.
    relays.push(await FakeRelay.open((await issueRelay()).token))
  })

  it('closes a link whose hello lists more sessions than the budget, before any work on them', async () => {
    const { token } = await issueRelay()
    const hello = (n: number, r: FakeRelay): FrameOf<'hello'> => ({
      type: 'hello',
      protocol: FRAME_PROTOCOL_VERSION,
      instance: r.instance,
      version: 'test',
      driver: 'sim',
      channels: ['alpha_web'],
      sessions: Array.from({ length: n }, (_, i) => ({ sid: `ses_unknown_${i}`, fence: 1 })),
      draining: false,
    })
    const over = await FakeRelay.open(token, { hello: false })
    relays.push(over)
    over.send(hello(HELLO_SESSIONS_MAX + 1, over))
    expect(await over.waitClosed()).toMatchObject({ code: 4002 })

    expect(over.frames.filter((f) => f.type === 'revoke')).toEqual([])
  })
})

describe('inbound frames buffered per session', () => {
  afterEach(() => vi.restoreAllMocks())

  it(`holds at most ${INBOUND_BUFFER_MAX} while the account commits, leaves the rest unacked, and hands every one to the account once when re-sent`, async () => {
    const { relay, assign } = await linkedAlphaAccount(relays, '1555')
    // Heartbeats, as a relay sends them: the flood takes longer than the lease on a loaded machine.
    const beat = setInterval(() => relay.ws.readyState === WebSocket.OPEN && relay.ws.send(PING_TEXT), 2_000)
    onTestFinished(() => clearInterval(beat))

    // The account's commit is recorded instead of written (storing 2,100 messages in local D1 takes over a minute on
    // a shared machine and says nothing about the hub's buffer; the hub acks only after this call returns). The first
    // is held until released, so every frame after it waits in the hub.
    let release = () => {}
    const held = new Promise<void>((r) => (release = r))
    const committed: string[] = []
    vi.spyOn(AccountObject.prototype, 'relayInbound').mockImplementation(async (_ref, _sid, messages) => {
      if (committed.length === 0) await held
      committed.push(...messages.map((m) => m.upstreamId))
    })

    const frame = (n: number): FrameOf<'inbound'> => ({
      type: 'inbound',
      id: `in-${n}`,
      sid: assign.sid,
      fence: assign.fence,
      message: {
        upstreamId: `FLOOD${n}`,
        from: { id: '447700900555@s.whatsapp.net', phone: '+447700900555', lid: null, name: null },
        text: `m${n}`,
        media: null,
        sentAt: Date.now(),
      },
    })
    const overflow = 100
    const total = 1 + INBOUND_BUFFER_MAX + overflow
    for (let n = 0; n < total; n++) relay.send(frame(n))
    // The hub takes a link's frames in order: its answer to a later frame means every frame above was taken in.
    relay.send({ ...frame(-1), id: 'barrier', sid: 'ses_not_a_session' })
    expect(await relay.next('reject', (r) => r.id === 'barrier', 30_000)).toMatchObject({ reason: 'unknown_session' })
    expect(relay.frames.filter((f) => f.type === 'ack' && f.ids.some((id) => id.startsWith('in-')))).toEqual([])

    release()
    const acked = new Set<string>()
    const ackedSoFar = () => {
      for (const f of relay.frames) if (f.type === 'ack') for (const id of f.ids) if (id.startsWith('in-')) acked.add(id)
      return acked.size
    }
    await vi.waitFor(() => expect(ackedSoFar()).toBe(1 + INBOUND_BUFFER_MAX), { timeout: 30_000, interval: 50 })
    // Past the bound nothing was buffered and nothing acked (and no reject): the relay keeps them and sends again.
    await new Promise((r) => setTimeout(r, 200))
    expect(ackedSoFar()).toBe(1 + INBOUND_BUFFER_MAX)
    const unacked = Array.from({ length: total }, (_, n) => n).filter((n) => !acked.has(`in-${n}`))
    expect(unacked).toEqual(Array.from({ length: overflow }, (_, i) => 1 + INBOUND_BUFFER_MAX + i))
    expect(relay.frames.filter((f) => f.type === 'reject')).toEqual([])

    for (const n of unacked) relay.send(frame(n))
    await vi.waitFor(() => expect(ackedSoFar()).toBe(total), { timeout: 30_000, interval: 50 })
    // Every message reached the account exactly once: the overflow only after it was sent again.
    expect(committed.toSorted()).toEqual(Array.from({ length: total }, (_, n) => `FLOOD${n}`).toSorted())
  }, 60_000)
})
