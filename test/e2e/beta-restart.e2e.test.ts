/**
 * A beta session across relay restarts, end to end: real relay processes running the real beta driver against the
 * simulated network (kept in this process, so the "upstream" outlives each relay). After a graceful restart
 * (SIGTERM) and after a crash (SIGKILL) the session resumes from its StringSession sealed at the edge, with no new
 * login (no code sent, still one logged-in session upstream), and a person who wrote BEFORE the restart is still
 * reached: GramJS keeps access hashes in memory only, so this works only because the edge stored their peer id
 * with its hash.
 */
import { describe, expect, it } from 'vitest'
import { restCalls } from './beta-login'
import { enc, eventually, issueRelayToken, simGet, simPost, storedContacts, type Json } from './relay-harness'
import { relaySuite } from './relay-suite'

const suite = relaySuite()
const { api } = suite

/** After a SIGKILL the edge waits out the dead relay's 10 s lease before the session moves. */
const RESUME_MS = 30_000
const ADA = { phone: '+447700900401', name: 'Ada Lovelace' }
const ZED = { phone: '+447700900402', name: 'Zed Writer' }

const outbox = async (phone: string) => (await simGet<{ messages: Json[] }>(suite.sim, `/beta/${enc(phone)}/outbox`)).messages
const codeOf = async (phone: string) => (await fetch(`${suite.sim.url}/sim/beta/${enc(phone)}/code`)).json()

describe.each(['SIGTERM', 'SIGKILL'] as const)('beta across a relay %s', (signal) => {
  it('resumes without a new login, and replies still reach someone who wrote before the restart', async () => {
    const { token } = await issueRelayToken(suite.server)
    const first = suite.relay(token)
    await first.linked
    const { key, phone, hook } = await suite.linkedBetaAccount('1446', [ADA])
    suite.cleanup(() => api(key, 'DELETE', `/channels/beta/${enc(phone)}`))

    // ZED is not in the address book: the relay knows them (and their access hash) only from their message.
    expect((await simPost(suite.sim, `/beta/${enc(phone)}/inbound`, { from: ZED.phone, text: 'Before the restart', name: ZED.name })).status).toBe(200)
    const received = (await hook.next()).payload as Json
    expect(received).toMatchObject({ event: 'message.received', message: { text: 'Before the restart' }, contact: { phone: ZED.phone, name: ZED.name } })
    expect(storedContacts(suite.server, phone).find((c) => c.phone === ZED.phone)?.peer_id).toMatch(/^u\d+\.-?\d+$/)
    const loginBefore = await codeOf(phone)

    const exit = await first.kill(signal)
    if (signal === 'SIGTERM') expect(exit, first.output().slice(-2000)).toBe(0)
    const second = suite.relay(token)
    await second.linked
    const calls = restCalls(api, key)
    await eventually(
      async () => {
        const s = (await calls.status(phone)).json
        return s.status === 'connected' && s.reason === null && s.live === true
      },
      RESUME_MS,
      'the session live on the new relay'
    )
    // Resumed, not logged in again: one session upstream, no login pending, and no new code was sent.
    expect(await simGet(suite.sim, `/beta/${enc(phone)}`)).toMatchObject({ logged_in_sessions: 1, pending_login: null })
    expect(await codeOf(phone)).toEqual(loginBefore)

    const replies = [
      { to: { contact_id: received.contact.id }, text: 'After the restart, by contact id' },
      { to: { phone: ZED.phone }, text: 'After the restart, by phone' },
      { to: { phone: ADA.phone }, text: 'After the restart, to the address book' },
    ]
    const ids: string[] = []
    for (const r of replies) {
      const res = await api(key, 'POST', '/messages', { account_id: phone, ...r })
      expect(res.status, JSON.stringify(res.json)).toBe(202)
      ids.push(res.json.message_id)
    }
    await eventually(
      async () => (await Promise.all(ids.map(async (id) => (await api(key, 'GET', `/messages/${id}`)).json.status))).every((s) => s === 'sent'),
      RESUME_MS,
      'every reply sent'
    )
    const got = await outbox(phone)
    expect(got.map((m) => [m.to, m.text])).toEqual([
      [ZED.phone, replies[0]!.text],
      [ZED.phone, replies[1]!.text],
      [ADA.phone, replies[2]!.text],
    ])
    // Subscribers saw each reply sent once (account events around the restart are not this test's business).
    const events = () => suite.receiver.log(hook.name).map((r) => r.json as Json)
    const sentIds = () =>
      events()
        .filter((p) => p.event === 'message.sent')
        .map((p) => p.message.id as string)
    await eventually(() => sentIds().length >= ids.length, 10_000, 'every message.sent delivered')
    await new Promise((r) => setTimeout(r, 300))
    expect(sentIds().sort()).toEqual([...ids].sort())
    expect(events().filter((p) => p.event === 'message.failed')).toEqual([])
  }, 90_000)
})
