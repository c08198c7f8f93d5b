/**
 * Relay failures end to end, with real relay processes against the local server and the simulated network in
 * this process (so the "upstream" keeps its backlog while a relay dies): a SIGKILL in the middle of a 500-message
 * burst duplicates nothing and loses at most what alpha had counted delivered in the instant before the kill (alpha's
 * device acknowledges on receipt, before the relay can pass a message on: docs/channels/alpha.md "The guarantee");
 * everything written after it arrives; sends queued while no relay runs go out when one returns; with two relays,
 * killing one moves its accounts to the other within 15 s and no session ever runs twice. Every resume uses the
 * session stored (encrypted) at the edge: no new QR code. Webhook subscribers see the same: each stored message as one
 * message.received, and each late send as one message.sent, signed and verified by the receiver.
 */
import { describe, expect, it } from 'vitest'
import { enc, eventually, inboundTexts, issueRelayToken, simGet, simPost, type Json } from './relay-harness'
import { relaySuite } from './relay-suite'

const suite = relaySuite()
const { api } = suite
const relay = (token: string) => suite.relay(token)

/** A linked alpha number whose removal after the test takes its session out of the hub, for a clean placement next. */
async function linkedAccount() {
  const account = await suite.linkedAlphaAccount('1556')
  suite.cleanup(() => api(account.key, 'DELETE', `/channels/alpha-web/connections/${enc(account.phone)}`))
  return account
}

async function relayList(): Promise<Json[]> {
  const res = await fetch(`${suite.server.url}/admin/relays`, { headers: { Authorization: `Bearer ${suite.server.adminToken}` } })
  return ((await res.json()) as { relays: Json[] }).relays
}

function holderOf(relays: Json[], phone: string): string | null {
  for (const r of relays) for (const l of r.links) if (l.sessions.some((s: Json) => s.account_id === phone)) return r.id
  return null
}

describe('relay failover', () => {
  it('duplicates nothing and loses only what was acknowledged in the instant before a SIGKILL during a 500-message burst', async () => {
    const { token } = await issueRelayToken(suite.server)
    const first = relay(token)
    await first.linked
    const { key, phone, hook } = await linkedAccount()
    const TOTAL = 500
    /** A hard kill can lose only messages acknowledged upstream while their frame was on its way to the edge. */
    const KILL_WINDOW_MS = 5_000
    const sentAt: number[] = []
    let next = 0
    let killStarted = 0
    let killDone = 0
    // Every poster waits while the kill runs (the posts already in flight still race it), so how many messages
    // come after it does not depend on how long a loaded machine takes to reap the process.
    let killing: Promise<unknown> | undefined
    const post = async () => {
      while (next < TOTAL) {
        const i = next++
        if (i === 150 && !killStarted) {
          killStarted = Date.now()
          killing = first.kill('SIGKILL').then(() => {
            killDone = Date.now()
          })
        }
        await killing
        sentAt[i] = Date.now()
        const r = await simPost(suite.sim, `/alpha/${enc(phone)}/inbound`, { from: `+4477009${String(i % 50).padStart(5, '0')}`, text: `burst-${i}` })
        expect(r.status).toBe(200)
      }
    }
    await Promise.all(Array.from({ length: 8 }, post))
    expect(killDone).toBeGreaterThan(0)

    const second = relay(token)
    await second.linked
    // Everything written after the kill was held by the network and must arrive; wait for all of it.
    const lateTexts = Array.from({ length: TOTAL }, (_, i) => i)
      .filter((i) => sentAt[i]! > killDone)
      .map((i) => `burst-${i}`)
    expect(lateTexts.length).toBeGreaterThan(300)
    await eventually(
      async () => {
        const t = new Set(await inboundTexts(api, key))
        return lateTexts.every((x) => t.has(x)) && t.size >= TOTAL - 50 ? true : undefined
      },
      40_000,
      'the messages written after the kill'
    )
    await new Promise((r) => setTimeout(r, 500))
    const final = await inboundTexts(api, key)
    expect(new Set(final).size).toBe(final.length)
    const stored = new Set(final)
    const lost = Array.from({ length: TOTAL }, (_, i) => i).filter((i) => !stored.has(`burst-${i}`))
    // Only messages written before the kill finished, and shortly before it began, may be missing.
    for (const i of lost) {
      expect(sentAt[i]!).toBeLessThanOrEqual(killDone)
      expect(sentAt[i]!).toBeGreaterThanOrEqual(killStarted - KILL_WINDOW_MS)
    }
    expect(lost.length).toBeLessThan(50)
    // Subscribers got each stored message once, though the relay resent what it had not seen acknowledged.
    const hooked = (await hook.take(final.length, 20_000)).map((d) => d.payload as Json)
    expect(hooked.filter((p) => p.event !== 'message.received' || p.message.direction !== 'inbound' || p.message.status !== 'received')).toEqual([])
    expect(new Set(hooked.map((p) => p.message.text))).toEqual(stored)
    expect(new Set(hooked.map((p) => p.message.id)).size).toBe(final.length)
    await hook.expectExactly(['account.connected', ...Array<'message.received'>(final.length).fill('message.received')])
    // Resumed from the stored session: linked once, never asked for a QR code again.
    expect(await simGet(suite.sim, `/alpha/${enc(phone)}`)).toMatchObject({ linked: true, pending_inbound: 0, max_concurrent_connections: 1 })
  })

  it('keeps sends queued while no relay runs and sends them when one returns', async () => {
    const { token } = await issueRelayToken(suite.server)
    const first = relay(token)
    await first.linked
    const { key, phone, hook } = await linkedAccount()
    await simPost(suite.sim, `/alpha/${enc(phone)}/inbound`, { from: '+447700900222', text: 'ping' })
    const contact = await eventually(
      async () => (await api(key, 'GET', '/messages?direction=inbound')).json.messages[0]?.contact,
      10_000,
      'the inbound message'
    )
    expect(await first.kill('SIGTERM')).toBe(0)

    const ids: string[] = []
    for (const text of ['one', 'two', 'three']) {
      const r = await api(key, 'POST', '/messages', { to: { contact_id: contact.id }, text })
      expect(r.status).toBe(202)
      ids.push(r.json.message_id)
    }
    await new Promise((r) => setTimeout(r, 500))
    for (const id of ids) expect((await api(key, 'GET', `/messages/${id}`)).json.status).toBe('queued')
    expect((await simGet<{ messages: Json[] }>(suite.sim, `/alpha/${enc(phone)}/outbox`)).messages).toEqual([])

    relay(token)
    await eventually(
      async () => {
        const statuses = await Promise.all(ids.map(async (id) => (await api(key, 'GET', `/messages/${id}`)).json.status))
        return statuses.every((s) => s === 'sent')
      },
      20_000,
      'all sent'
    )
    const outbox = (await simGet<{ messages: Json[] }>(suite.sim, `/alpha/${enc(phone)}/outbox`)).messages
    expect(outbox.map((m) => m.text).sort()).toEqual(['one', 'three', 'two'])
    const events = await hook.take(4)
    expect(events[0]!.event).toBe('message.received')
    const sent = events.slice(1).map((d) => d.payload as Json)
    expect(sent.map((p) => [p.event, p.message.id, p.message.status]).sort()).toEqual(ids.map((id) => ['message.sent', id, 'sent']).sort())
    await hook.expectExactly(['account.connected', 'message.received', 'message.sent', 'message.sent', 'message.sent'])
  })

  it('moves a killed relay’s accounts to the other relay within 15 s, never running a session twice', async () => {
    const [ta, tb] = [await issueRelayToken(suite.server), await issueRelayToken(suite.server)]
    const a = relay(ta.token)
    const b = relay(tb.token)
    await Promise.all([a.linked, b.linked])
    const accounts = []
    for (let i = 0; i < 4; i++) accounts.push(await linkedAccount())
    const before = await relayList()
    const onA = accounts.filter((x) => holderOf(before, x.phone) === ta.id)
    expect(onA.length).toBeGreaterThan(0)
    expect(accounts.length - onA.length).toBeGreaterThan(0)

    const killedAt = Date.now()
    await a.kill('SIGKILL')
    await eventually(
      async () => {
        const now = await relayList()
        if (!onA.every((x) => holderOf(now, x.phone) === tb.id)) return false
        const phones = await Promise.all(onA.map((x) => simGet(suite.sim, `/alpha/${enc(x.phone)}`)))
        const statuses = await Promise.all(onA.map(async (x) => (await api(x.key, 'GET', '/accounts')).json.accounts[0]?.status))
        return phones.every((p) => p.open_connections === 1) && statuses.every((s) => s === 'connected')
      },
      15_000,
      'accounts moved and connected'
    )
    const tookMs = Date.now() - killedAt
    expect(tookMs).toBeLessThan(15_000)
    for (const x of accounts) expect((await simGet(suite.sim, `/alpha/${enc(x.phone)}`)).max_concurrent_connections).toBe(1)
    // The move is invisible to subscribers: no account.disconnected / account.connected pair for a session that resumed.
    for (const x of accounts) await x.hook.expectExactly(['account.connected'])
  })

  it('resumes a number removed and added again after a relay restart, without a new QR (issue 14 §1)', async () => {
    const { token } = await issueRelayToken(suite.server)
    const first = relay(token)
    await first.linked
    const { key, phone } = await linkedAccount()
    const qrNow = async () => (await api(key, 'GET', `/channels/alpha-web/connections/${enc(phone)}/qr`)).json.qr_code
    const linkAgain = async (body: Json) => {
      expect((await api(key, 'POST', '/channels/alpha-web/connections', { phone_number: phone, ...body })).status).toBe(200)
      await eventually(qrNow, 10_000, 'a QR code')
      await simPost(suite.sim, `/alpha/${enc(phone)}/link`)
      await eventually(async () => (await api(key, 'GET', '/accounts')).json.accounts[0]?.status === 'connected', 10_000, 'connected')
    }
    // A second link with force_new moves the session's fence past 1; the removal then must not let it start over.
    await linkAgain({ force_new: true })
    expect((await api(key, 'DELETE', `/channels/alpha-web/connections/${enc(phone)}`)).json).toMatchObject({ status: 'removed' })
    await linkAgain({})
    // Every session write of the re-added number is acked: nothing waits at the relay, and it is healthy.
    const health = await first.healthUrl
    const h = await eventually(
      async () => {
        const r = (await (await fetch(health)).json()) as Json
        return r.link.unacked_frames === 0 ? r : undefined
      },
      10_000,
      'session writes acked'
    )
    expect(h.status).toBe('ok')
    expect(await first.kill('SIGTERM')).toBe(0)

    const loginsBefore = (await simGet(suite.sim, `/alpha/${enc(phone)}`)).logins as number
    relay(token)
    await eventually(
      async () => {
        const p = await simGet(suite.sim, `/alpha/${enc(phone)}`)
        return (p.logins as number) > loginsBefore && p.open_connections === 1 && (await api(key, 'GET', '/accounts')).json.accounts[0]?.status === 'connected'
      },
      15_000,
      'resumed on the new relay'
    )
    expect(await qrNow()).toBeFalsy()
    expect((await simGet(suite.sim, `/alpha/${enc(phone)}`)).link_pending).toBe(false)
  })
})
