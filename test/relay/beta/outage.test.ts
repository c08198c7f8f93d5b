/**
 * issue 21 item 1, on the real GramJS client against the fake data centre: an outage longer than GramJS's own
 * reconnect attempts (after which its sender stops for good and every call would wait forever) must not wedge the
 * driver. The account shows the outage within the deadlines, calls made meanwhile settle instead of hanging, and the
 * session comes back by itself once the data centre accepts connections again.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { dcHarness, FRIEND, msg, PHONE, until, type DcHarness } from './dc-harness'

let h: DcHarness
afterEach(async () => h?.stopAll())

/** Longer than GramJS's 5 attempts with its production 1 s pause, so even an unscaled library gives up. */
const OUTAGE_S = 8

const settled = (p: Promise<unknown>) =>
  p.then(
    () => 'sent',
    () => 'failed'
  )

describe('beta across an outage of the data centre', { timeout: 60_000 }, () => {
  it('reports unresponsive, fails the send made meanwhile instead of hanging, and recovers by itself', async () => {
    h = await dcHarness()
    const r = await h.loggedIn()
    const to = { phone: FRIEND, peerId: null }
    expect((await r.c.send(msg('before', to))).upstreamId).toMatch(/^\d+$/)

    await h.control('POST', '/beta/dc/refuse', { seconds: OUTAGE_S })
    const refusedAt = Date.now()
    const during = settled(r.c.send(msg('during', to)))
    await until(() => r.last()?.state === 'disconnected', OUTAGE_S * 1000, 'the outage reported')
    expect(r.last()).toMatchObject({ state: 'disconnected', problem: 'unresponsive' })
    expect(Date.now() - refusedAt).toBeLessThan(OUTAGE_S * 1000)
    // A call made during the outage comes back (failed, for the edge to retry) before the outage is over.
    const outcome = await Promise.race([during, new Promise((r) => setTimeout(() => r('hanging'), OUTAGE_S * 1000))])
    expect(outcome).toBe('failed')

    await until(() => r.last()?.state === 'connected', 20_000, 'the session back after the outage')
    expect(Date.now() - refusedAt).toBeGreaterThanOrEqual(OUTAGE_S * 1000 - 500)
    expect((await r.c.send(msg('after', to))).upstreamId).toMatch(/^\d+$/)
    await h.write('hello again')
    await until(() => r.inbound.some((m) => m.text === 'hello again'), 10_000, 'inbound after the outage')
    const outbox = (await h.control('GET', `/beta/${encodeURIComponent(PHONE)}/outbox`)).json.messages as Array<{ text: string }>
    expect(outbox.map((m) => m.text)).toEqual(['text before', 'text after'])
  })

  it('keeps retrying when the data centre is down at start, and comes up once it is back', async () => {
    h = await dcHarness()
    const first = await h.loggedIn()
    await first.c.stop()
    await h.control('POST', '/beta/dc/refuse', { seconds: OUTAGE_S })
    const r = await h.run()
    await until(() => r.last()?.state === 'disconnected', OUTAGE_S * 1000, 'the failed start reported')
    expect(r.last()).toMatchObject({ problem: 'unresponsive' })
    await until(() => r.last()?.state === 'connected', 20_000, 'the session up after the outage')
    await h.write('you are back')
    await until(() => r.inbound.some((m) => m.text === 'you are back'), 10_000, 'inbound after the start')
  })

  it('reports a session whose auth key the data centre does not know (-404) instead of waiting on it forever', async () => {
    h = await dcHarness()
    const minted = String((await h.control('POST', '/beta/dc/sessions', { phone: PHONE })).json.session)
    const bytes = Buffer.from(minted.slice(1), 'base64')
    bytes.writeUInt8(bytes.readUInt8(bytes.length - 1) ^ 0xff, bytes.length - 1)
    await h.store.write(new Map([['beta-session', `1${bytes.toString('base64')}`]]))
    const r = await h.run()
    // Sooner than the connect deadline (3 s here): GramJS's -404 ends the attempt at once.
    await until(() => r.last()?.state === 'disconnected', 2_500, 'the dead key reported')
    expect(r.last()).toMatchObject({ problem: 'unresponsive' })
    expect(((await h.control('GET', '/beta/dc')).json.stats as { unknownKeys: number }).unknownKeys).toBeGreaterThan(0)
  })
})
