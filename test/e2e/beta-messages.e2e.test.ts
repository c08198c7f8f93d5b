/**
 * beta messages end to end: the real local server, a real relay process running the real beta driver against the
 * simulated network, and a receiver verifying every signed webhook. A send to someone in the address book reaches
 * their phone, turns `sent`, then `read` on their read receipt, never `delivered` (beta has none); a number outside
 * it is refused with beta_requires_existing_contact; a person who wrote first (phone shown or hidden) reaches a wait
 * and a webhook with their phone and name and can be answered. A flood wait pauses sends visibly and then lets
 * every queued one out once, in order. A stranger flag restricts the account; a logout in the app is found by the
 * relay's probe.
 */
import { beforeAll, describe, expect, it } from 'vitest'
import { restCalls, statusBecomes } from './beta-login'
import { enc, eventually, issueRelayToken, simGet, simPost, storedContacts, type Json } from './relay-harness'
import { relaySuite } from './relay-suite'
import { ISO_DATE_TIME } from './webhook-inbox'

const suite = relaySuite({ keepRelays: true })
const { api } = suite

/** The relay's probe runs every 30 s (relay/beta/health.ts), and docs/channels/beta.md promises "within a minute". */
const PROBE_FINDS_LOGOUT_MS = 60_000

beforeAll(async () => {
  await suite.relay((await issueRelayToken(suite.server)).token).linked
})

const ADA = { phone: '+447700900201', name: 'Ada Lovelace' }
const account = (contacts: Array<{ phone: string; name?: string }> = [ADA]) => suite.linkedBetaAccount('1445', contacts)
const outbox = async (phone: string) => (await simGet<{ messages: Json[] }>(suite.sim, `/beta/${enc(phone)}/outbox`)).messages
const epochMs = (t: unknown) => (typeof t === 'number' ? t : Date.parse(String(t)))

function messageEvent(event: string, phone: string, message: Json, contact: Json) {
  return { event, created_at: ISO_DATE_TIME, account_id: phone, channel: 'beta', message: { media: null, error: null, ...message }, contact }
}

function accountEvent(event: string, phone: string, status: string, reason: string | null) {
  return { event, created_at: ISO_DATE_TIME, account_id: phone, channel: 'beta', account: { id: phone, channel: 'beta', identifier: phone, status, reason } }
}

describe('beta messages through a relay on the simulator', () => {
  it('sends to an address-book contact: their phone gets it, sent, then read on their receipt, and no delivered', async () => {
    const { key, phone, hook } = await account()
    const stranger = await api(key, 'POST', '/messages', { account_id: phone, to: { phone: '+447700900299' }, text: 'Hello stranger' })
    expect(stranger).toEqual({ status: 422, json: { error_code: 'beta_requires_existing_contact', error: expect.any(String) } })

    const sent = await api(key, 'POST', '/messages', { account_id: phone, to: { phone: ADA.phone }, text: 'Your order has shipped.' })
    expect(sent.status).toBe(202)
    const id = sent.json.message_id
    const contact = { id: expect.any(String), phone: ADA.phone, name: ADA.name, username: null }
    const outbound = (status: string) =>
      messageEvent(`message.${status}`, phone, { id, direction: 'outbound', text: 'Your order has shipped.', status }, contact)
    expect((await hook.next()).payload).toEqual(outbound('sent'))
    const [received] = await outbox(phone)
    expect(received).toEqual(expect.objectContaining({ to: ADA.phone, text: 'Your order has shipped.', media_url: null }))

    // Ada's app reads it: the network knows the message by its upstream id only.
    expect((await simPost(suite.sim, `/beta/${enc(phone)}/receipt`, { message_id: received!.id, status: 'read' })).status).toBe(200)
    expect((await hook.next()).payload).toEqual(outbound('read'))
    expect((await api(key, 'GET', `/messages/${id}`)).json).toMatchObject({ id, direction: 'outbound', status: 'read', contact: { phone: ADA.phone } })
    // Exactly these: no message.delivered (beta has no per-message delivered receipt), nothing for the refused send.
    await hook.expectExactly(['account.connected', 'message.sent', 'message.read'])
  })

  it('brings a message from someone who wrote first to a wait and a webhook, and replies to them by phone and by contact id', async () => {
    const { key, phone, hook } = await account()
    const grace = { phone: '+447700900301', name: 'Grace Hopper', username: 'ghopper' }
    const cursor = (await api(key, 'GET', '/messages/wait?timeout_s=0')).json.cursor
    const waiting = api(key, 'GET', `/messages/wait?timeout_s=20&cursor=${cursor}`)
    const wrote = await simPost(suite.sim, `/beta/${enc(phone)}/inbound`, {
      from: grace.phone,
      text: 'Is the shop open on Sunday?',
      name: grace.name,
      username: grace.username,
    })
    expect(wrote.status).toBe(200)
    const [got, received] = await Promise.all([waiting.then((r) => r.json.messages as Json[]), hook.next()])
    expect(got).toEqual([
      expect.objectContaining({
        account_id: phone,
        direction: 'inbound',
        status: 'received',
        text: 'Is the shop open on Sunday?',
        contact: expect.objectContaining({ phone: grace.phone, name: grace.name, username: grace.username }),
      }),
    ])
    const graceContact = { id: got[0]!.contact.id, phone: grace.phone, name: grace.name, username: grace.username }
    expect(received.payload).toEqual(
      messageEvent('message.received', phone, { id: got[0]!.id, direction: 'inbound', text: 'Is the shop open on Sunday?', status: 'received' }, graceContact)
    )

    // Someone whose phone is hidden by their privacy settings: a name, no number, still answerable by contact id.
    await simPost(suite.sim, `/beta/${enc(phone)}/inbound`, { from: '+447700900302', text: 'Hi from a private number', name: 'Fox', phone_hidden: true })
    const hidden = (await hook.next()).payload as Json
    expect(hidden).toEqual(
      messageEvent(
        'message.received',
        phone,
        { id: expect.any(String), direction: 'inbound', text: 'Hi from a private number', status: 'received' },
        { id: expect.any(String), phone: null, name: 'Fox', username: null }
      )
    )
    // The edge keeps each person's peer id with its access hash (u<id>.<hash>), so replies need no relay cache.
    const stored = storedContacts(suite.server, phone)
    const peerId = expect.stringMatching(/^u\d+\.-?\d+$/)
    expect(stored).toHaveLength(3)
    expect(stored).toEqual(
      expect.arrayContaining([
        { phone: ADA.phone, name: ADA.name, peer_id: peerId },
        { phone: grace.phone, name: grace.name, peer_id: peerId },
        { phone: null, name: 'Fox', peer_id: peerId },
      ])
    )
    // Their number is not known to the gateway, so it does not address them.
    expect((await api(key, 'POST', '/messages', { account_id: phone, to: { phone: '+447700900302' }, text: 'x' })).json.error_code).toBe(
      'beta_requires_existing_contact'
    )

    const replies = [
      { to: { phone: grace.phone }, text: 'Yes, 10 to 4.' },
      { to: { contact_id: graceContact.id }, text: 'And on holidays too.' },
      { to: { contact_id: hidden.contact.id }, text: 'Thanks for writing!' },
    ]
    const ids: string[] = []
    for (const r of replies) {
      const res = await api(key, 'POST', '/messages', { account_id: phone, ...r })
      expect(res.status, JSON.stringify(res.json)).toBe(202)
      ids.push(res.json.message_id)
    }
    const sentEvents = (await hook.take(3)).map((d) => d.payload as Json)
    expect(sentEvents.map((p) => [p.event, p.message.id, p.message.status]).sort()).toEqual(ids.map((id) => ['message.sent', id, 'sent']).sort())
    const delivered = await outbox(phone)
    expect(delivered.map((m) => m.text)).toEqual(replies.map((r) => r.text))
    expect(delivered.slice(0, 2).map((m) => m.to)).toEqual([grace.phone, grace.phone])
    await hook.expectExactly(['account.connected', 'message.received', 'message.received', 'message.sent', 'message.sent', 'message.sent'])
  })

  it('pauses sends on a flood wait, shows it in the status and GET /accounts, then sends every one once and in order', async () => {
    // Four people from the address book, three sends each: the loop guard (3 unanswered per person) stays out of it.
    const people = Array.from({ length: 4 }, (_, i) => ({ phone: `+44770090021${i}`, name: `Person ${i}` }))
    const { key, phone, hook } = await account(people)
    const calls = restCalls(api, key)
    const SECONDS = 2
    const N = 12
    const to = (i: number) => people[i % people.length]!.phone
    expect((await simPost(suite.sim, `/beta/${enc(phone)}/flood`, { seconds: SECONDS })).status).toBe(200)
    // Both read models are watched from before the first send: the pause lasts SECONDS only, less than N sends may
    // take to post on a loaded machine.
    const watch = (read: () => Promise<Json | undefined>, what: string) => eventually(read, 20_000, what)
    const statusSeen = watch(async () => {
      const s = (await calls.status(phone)).json
      return s.reason === 'flood_wait' ? s : undefined
    }, 'the flood pause in the status')
    const listedSeen = watch(async () => {
      const a = (await api(key, 'GET', '/accounts')).json.accounts.find((x: Json) => x.id === phone)
      return a?.status_reason === 'flood_wait' ? a : undefined
    }, 'the flood pause in GET /accounts')
    const firstPostAt = Date.now()
    const ids: string[] = []
    for (let i = 0; i < N; i++) {
      const r = await api(key, 'POST', '/messages', { account_id: phone, to: { phone: to(i) }, text: `in order ${i}` })
      expect(r.status).toBe(202)
      ids.push(r.json.message_id)
    }
    const [status, listed] = await Promise.all([statusSeen, listedSeen])
    expect(status).toMatchObject({ status: 'connected', reason: 'flood_wait', message: expect.stringContaining('Sends resume at') })
    expect(listed).toMatchObject({ status: 'connected', status_reason: 'flood_wait' })

    const sent = (await hook.take(N, 30_000)).map((d) => d.payload as Json)
    expect(sent.map((p) => p.event)).toEqual(Array(N).fill('message.sent'))
    expect(new Set(sent.map((p) => p.message.id))).toEqual(new Set(ids))
    const got = await outbox(phone)
    expect(got.map((m) => [m.to, m.text])).toEqual(ids.map((_, i) => [to(i), `in order ${i}`]))
    // Nothing left before the pause was over.
    expect(epochMs(got[0]!.sent_at) - firstPostAt).toBeGreaterThanOrEqual(SECONDS * 1000 - 100)
    await statusBecomes(calls, phone, 'connected', 10_000, null)
    expect((await api(key, 'GET', '/accounts')).json.accounts[0]).toMatchObject({ status: 'connected', status_reason: null })
    // Still exactly once each after the relay had time to send anything twice.
    await new Promise((r) => setTimeout(r, 500))
    expect((await outbox(phone)).length).toBe(N)
    await hook.expectExactly(['account.connected', ...Array<'message.sent'>(N).fill('message.sent')])
  })

  it('restricts the account on a stranger flag (account.restricted, stranger_flag) and refuses its sends', async () => {
    const { key, phone, hook } = await account()
    expect((await simPost(suite.sim, `/beta/${enc(phone)}/stranger`)).status).toBe(200)
    const first = await api(key, 'POST', '/messages', { account_id: phone, to: { phone: ADA.phone }, text: 'Hello again' })
    expect(first.status).toBe(202)
    const events = (await hook.take(2)).map((d) => d.payload as Json)
    const restricted = events.find((p) => p.event === 'account.restricted')
    const failed = events.find((p) => p.event === 'message.failed')
    expect(restricted).toEqual(accountEvent('account.restricted', phone, 'restricted', 'stranger_flag'))
    expect(failed).toMatchObject({
      event: 'message.failed',
      message: { id: first.json.message_id, status: 'failed', error: expect.stringContaining('PEER_FLOOD') },
    })
    expect((await api(key, 'GET', '/accounts')).json.accounts).toEqual([
      expect.objectContaining({ id: phone, status: 'restricted', status_reason: 'stranger_flag' }),
    ])
    expect((await restCalls(api, key).status(phone)).json).toMatchObject({
      status: 'error',
      reason: 'stranger_flag',
      message: expect.stringContaining('PEER_FLOOD'),
    })
    const refused = await api(key, 'POST', '/messages', { account_id: phone, to: { phone: ADA.phone }, text: 'And again' })
    expect(refused).toEqual({ status: 403, json: { error_code: 'account_restricted', error: expect.stringContaining('stranger_flag') } })
    expect(await outbox(phone)).toEqual([])
    await hook.expectExactly(['account.connected', ...events.map((p) => p.event)])
  })

  it('finds a logout from the app with the relay’s probe: disconnected (logged_out) within a minute', async () => {
    const { key, phone, hook } = await account()
    expect((await simPost(suite.sim, `/beta/${enc(phone)}/logout`)).status).toBe(200)
    const loggedOutAt = Date.now()
    expect((await hook.next(PROBE_FINDS_LOGOUT_MS + 10_000)).payload).toEqual(accountEvent('account.disconnected', phone, 'disconnected', 'logged_out'))
    expect(Date.now() - loggedOutAt).toBeLessThan(PROBE_FINDS_LOGOUT_MS)
    expect((await restCalls(api, key).status(phone)).json).toMatchObject({ status: 'disconnected', reason: 'logged_out' })
    expect((await api(key, 'GET', '/accounts')).json.accounts).toEqual([
      expect.objectContaining({ id: phone, status: 'disconnected', status_reason: 'logged_out' }),
    ])
    expect((await api(key, 'POST', '/messages', { account_id: phone, to: { phone: ADA.phone }, text: 'Anyone?' })).json.error_code).toBe(
      'account_not_connected'
    )
    await hook.expectExactly(['account.connected', 'account.disconnected'])
  }, 120_000)
})
