/**
 * issue 21 items 2 and 3, on the real GramJS client against the fake data centre, which (like beta) pushes an update
 * only to a session connected at that moment: what is written while no relay runs the session, an update the session
 * never received (a pts gap), a gap longer than one difference slice or than the network remembers, and a short-form
 * message from someone the relay has never seen all reach the edge once each, in order, through the driver's own
 * catch-up (updates.getState / getDifference, GramJS has none), and a restarted or failed-over relay resumes from the
 * update state persisted with the session.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { dcHarness, FRIEND, msg, PHONE, STRANGER, until, type DcHarness } from './dc-harness'

let h: DcHarness
afterEach(async () => h?.stopAll())

const P = encodeURIComponent(PHONE)
const texts = (r: { inbound: Array<{ text: string }> }) => r.inbound.map((m) => m.text)

describe('beta catch-up on the real client', { timeout: 60_000 }, () => {
  it('brings what was written while the relay was stopped, and the receipts, once each and in order', async () => {
    h = await dcHarness()
    const first = await h.loggedIn()
    const to = { phone: FRIEND, peerId: null }
    const a = await first.c.send(msg('m1', to))
    const b = await first.c.send(msg('m2', to))
    await h.write('seen live')
    await until(() => texts(first).includes('seen live'))
    await first.c.stop()

    const written = ['one', 'two', 'three', 'four', 'five']
    for (const t of written) await h.write(t)
    await h.control('POST', `/beta/${P}/receipt`, { message_id: b.upstreamId, status: 'read' })
    const again = await h.run()
    await until(() => texts(again).length >= written.length && again.receipts.length >= 2, 10_000, 'the backlog fetched')
    await new Promise((r) => setTimeout(r, 300))
    expect(texts(again)).toEqual(written)
    expect(again.receipts.map((x) => [x.upstreamId, x.status])).toEqual([
      [a.upstreamId, 'read'],
      [b.upstreamId, 'read'],
    ])

    // A failover: another relay on the same stored session starts from the persisted state, not from scratch.
    await again.c.stop()
    await h.write('six')
    const failover = await h.run()
    await until(() => texts(failover).includes('six'), 10_000, 'the message written before the failover')
    await new Promise((r) => setTimeout(r, 300))
    expect(texts(failover)).toEqual(['six'])
  })

  it('fetches a gap longer than one difference slice, and a gap the network no longer remembers', async () => {
    h = await dcHarness()
    const first = await h.loggedIn()
    await first.c.stop()
    await h.control('POST', '/beta/dc/config', { difference_slice: 3 })
    const written = Array.from({ length: 10 }, (_, i) => `slice ${i + 1}`)
    for (const t of written) await h.write(t)
    const again = await h.run()
    await until(() => texts(again).length >= written.length, 10_000, 'every slice fetched')
    expect(texts(again)).toEqual(written)

    await again.c.stop()
    await h.write('too long 1', STRANGER, { name: 'Sam Stranger' })
    await h.write('too long 2')
    await h.control('POST', `/beta/${P}/forget`, { count: 1_000 })
    const third = await h.run()
    await until(() => texts(third).includes('too long 2'), 10_000, 'history refetched after differenceTooLong')
    expect(texts(third).filter((t) => t.startsWith('too long'))).toEqual(['too long 1', 'too long 2'])
    expect(third.inbound.find((m) => m.text === 'too long 1')?.from).toMatchObject({ name: 'Sam Stranger', phone: STRANGER })
  })

  it('fills a pts gap while connected: an update the session never received arrives before the next one', async () => {
    h = await dcHarness()
    const r = await h.loggedIn()
    await h.control('POST', `/beta/${P}/withhold`, { count: 2 })
    await h.write('withheld 1')
    await h.write('withheld 2')
    await h.write('pushed')
    await until(() => texts(r).length >= 3, 10_000, 'the gap filled')
    expect(texts(r)).toEqual(['withheld 1', 'withheld 2', 'pushed'])
  })

  it('delivers a short-form message from someone it never saw, with their phone and name (item 3)', async () => {
    h = await dcHarness()
    const first = await h.loggedIn()
    await first.c.stop()
    // A new process: the directory knows only the address book.
    const r = await h.run()
    await until(() => r.last()?.state === 'connected')
    await h.write('hi, new here', STRANGER, { name: 'Sam Stranger', short: true })
    await until(() => texts(r).includes('hi, new here'), 10_000, 'the short message')
    expect(r.inbound.find((m) => m.text === 'hi, new here')?.from).toMatchObject({ phone: STRANGER, name: 'Sam Stranger' })
  })
})
