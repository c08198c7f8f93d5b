/**
 * What an agent does in a conversation (issue 25), end to end for the relay channels: the real local server, a real
 * relay process (alpha on the sim's device client, beta on the real GramJS driver against the fake data centre) and
 * the simulated network, which records what each account did. Per channel: a quoted reply reaches the phone quoting
 * the person's message, the person's quoted reply comes back with our id in `reply_to`, a reaction and its removal,
 * the person's reaction as `message.reaction` and on the message, typing, a read mark, the lookup, and the network's
 * own warning (alpha's reach-out time lock, beta's flood wait) as `account.at_risk` and the account's `risk`.
 */
import { beforeAll, describe, expect, it } from 'vitest'
import { SUBSCRIBABLE_EVENTS } from '../../schema/events'
import { enc, eventually, issueRelayToken, simGet, simPost, type Json } from './relay-harness'
import { relaySuite } from './relay-suite'
import { subscribeInbox, type WebhookInbox } from './webhook-inbox'

const suite = relaySuite({ keepRelays: true })
const { api } = suite

beforeAll(async () => {
  await suite.relay((await issueRelayToken(suite.server)).token).linked
})

/** The next delivery of `event`, skipping others (sends' own events interleave with the ones a test is about). */
async function nextOf(hook: WebhookInbox, event: string): Promise<Json> {
  for (;;) {
    const d = await hook.next(20_000)
    if (d.event === event) return d.payload as Json
  }
}

type Actions = { actions: Json[] }

/** A second webhook that takes the extension events too (message.reaction, account.at_risk). */
const extensionsHook = (key: string, name: string) => subscribeInbox(suite.server, suite.receiver, key, name, SUBSCRIBABLE_EVENTS)

describe('chat actions on alpha through a relay on the simulator', () => {
  it('quotes, reacts, types, marks read, looks up, and hears the reach-out time lock', async () => {
    const { key, phone, hook } = await suite.linkedAlphaAccount('1447')
    const extensions = await extensionsHook(key, `ext-${phone}`)
    const ada = '+447700900411'
    await simPost(suite.sim, `/alpha/${enc(phone)}/inbound`, { from: ada, text: 'Is my order on its way?', name: 'Ada' })
    const received = await nextOf(hook, 'message.received')
    const theirs = String(received.message.id)

    // A quoted reply: the phone gets it quoting Ada's message by the network's id.
    const reply = await api(key, 'POST', '/messages', { account_id: phone, to: { phone: ada }, text: 'Yes, it ships today.', reply_to: theirs })
    expect(reply.status, JSON.stringify(reply.json)).toBe(202)
    await nextOf(hook, 'message.sent')
    const outbox = (await simGet<{ messages: Json[] }>(suite.sim, `/alpha/${enc(phone)}/outbox`)).messages
    expect(outbox.at(-1)).toMatchObject({ text: 'Yes, it ships today.', quoted: expect.stringMatching(/^SIM/) })

    // Ada answers quoting our reply: the message names it by our id.
    await simPost(suite.sim, `/alpha/${enc(phone)}/inbound`, { from: ada, text: 'Great, thanks!', reply_to: outbox.at(-1)!.id })
    const quoted = await nextOf(hook, 'message.received')
    expect(quoted.message).toMatchObject({ text: 'Great, thanks!', reply_to: reply.json.message_id })
    expect((await api(key, 'GET', `/messages/${quoted.message.id}`)).json).toMatchObject({ reply_to: reply.json.message_id })

    // Our reaction to her message, then its removal; typing; a read mark: each done on the network, in order.
    expect((await api(key, 'POST', `/messages/${theirs}/reactions`, { emoji: '👍' })).status).toBe(200)
    expect((await api(key, 'DELETE', `/messages/${theirs}/reactions`)).status).toBe(200)
    expect((await api(key, 'POST', `/accounts/${enc(phone)}/typing`, { to: { phone: ada } })).status).toBe(200)
    const read = await api(key, 'POST', `/messages/${quoted.message.id}/read`)
    expect(read.status, JSON.stringify(read.json)).toBe(200)
    const done = (await simGet<Actions>(suite.sim, `/alpha/${enc(phone)}/actions`)).actions
    expect(done.map((a) => [a.kind, a.emoji ?? a.state ?? null])).toEqual([
      ['react', '👍'],
      ['react', ''],
      ['presence', 'composing'],
      ['read', null],
    ])
    expect(done[0]).toMatchObject({ to: ada, target: outbox.at(-1)!.quoted })

    // Ada reacts to our reply: message.reaction, and the reaction on the message.
    await simPost(suite.sim, `/alpha/${enc(phone)}/react`, { from: ada, message_id: outbox.at(-1)!.id, emoji: '❤️' })
    const reacted = await nextOf(extensions, 'message.reaction')
    expect(reacted.reaction).toMatchObject({ emoji: '❤️', from: received.contact.id })
    expect(reacted.message.id).toBe(reply.json.message_id)
    expect((await api(key, 'GET', `/messages/${reply.json.message_id}`)).json.reactions).toEqual([
      { emoji: '❤️', from: received.contact.id, at: expect.any(String) },
    ])

    // Lookups: Ada is on the network, a number nobody has is not; the second ask comes from the cache.
    const found = await api(key, 'GET', `/accounts/${enc(phone)}/lookup?phone=${enc(ada)}`)
    expect(found.json).toMatchObject({ on_network: true, cached: false })
    expect((await api(key, 'GET', `/accounts/${enc(phone)}/lookup?phone=${enc('+447700900499')}`)).json).toMatchObject({ on_network: false })
    expect((await api(key, 'GET', `/accounts/${enc(phone)}/lookup?phone=${enc(ada)}`)).json).toMatchObject({ on_network: true, cached: true })
    expect((await simGet<Actions>(suite.sim, `/alpha/${enc(phone)}/actions`)).actions.filter((a) => a.kind === 'lookup')).toHaveLength(2)

    // The network sets a reach-out time lock: account.at_risk, the account's risk, and new contacts paused.
    const until = Date.now() + 3_600_000
    await simPost(suite.sim, `/alpha/${enc(phone)}/timelock`, { active: true, until_ms: until })
    const risk = await nextOf(extensions, 'account.at_risk')
    expect(risk).toMatchObject({ account_id: phone, signal: 'reachout_timelock', until: new Date(until).toISOString(), advice: expect.any(String) })
    const listed = await eventually(async () => {
      const accounts = (await api(key, 'GET', '/accounts')).json.accounts as Json[]
      const me = accounts.find((a) => a.id === phone)
      return me?.risk?.at_risk ? me : null
    })
    expect(listed.risk.signals).toEqual([expect.objectContaining({ signal: 'reachout_timelock' })])
    const stranger = await api(key, 'POST', '/messages', { account_id: phone, to: { phone: '+447700900412' }, text: 'Hello' })
    expect(stranger.json.error_code).toBe('account_at_risk')
    // Replies still go out.
    expect((await api(key, 'POST', '/messages', { account_id: phone, to: { phone: ada }, text: 'Anything else?' })).status).toBe(202)
  })
})

describe('chat actions on beta through a relay on the simulator', () => {
  const ADA = { phone: '+447700900421', name: 'Ada Lovelace' }

  it('quotes, reacts, types, marks read, answers lookups from the address book only, and reports a flood wait', async () => {
    const { key, phone, hook } = await suite.linkedBetaAccount('1448', [ADA])
    const extensions = await extensionsHook(key, `ext-${phone}`)
    const wrote = await simPost(suite.sim, `/beta/${enc(phone)}/inbound`, { from: ADA.phone, text: 'Can I change my delivery address?' })
    const received = await nextOf(hook, 'message.received')
    const theirs = String(received.message.id)

    const reply = await api(key, 'POST', '/messages', { account_id: phone, to: { phone: ADA.phone }, text: 'Of course.', reply_to: theirs })
    expect(reply.status, JSON.stringify(reply.json)).toBe(202)
    await nextOf(hook, 'message.sent')
    const outbox = (await simGet<{ messages: Json[] }>(suite.sim, `/beta/${enc(phone)}/outbox`)).messages
    expect(outbox.at(-1)).toMatchObject({ text: 'Of course.', reply_to: String(wrote.json.message_id) })

    await simPost(suite.sim, `/beta/${enc(phone)}/inbound`, { from: ADA.phone, text: 'Thanks!', reply_to: Number(outbox.at(-1)!.id) })
    const quoted = await nextOf(hook, 'message.received')
    expect(quoted.message).toMatchObject({ text: 'Thanks!', reply_to: reply.json.message_id })

    expect((await api(key, 'POST', `/messages/${theirs}/reactions`, { emoji: '👍' })).status).toBe(200)
    expect((await api(key, 'POST', `/accounts/${enc(phone)}/typing`, { to: { phone: ADA.phone } })).status).toBe(200)
    expect((await api(key, 'POST', `/messages/${quoted.message.id}/read`)).status).toBe(200)
    const done = (await simGet<Actions>(suite.sim, `/beta/${enc(phone)}/actions`)).actions
    expect(done.map((a) => a.kind)).toEqual(['react', 'typing', 'read'])
    expect(done[0]).toMatchObject({ to: ADA.phone, message_id: Number(wrote.json.message_id), emoji: '👍' })

    await simPost(suite.sim, `/beta/${enc(phone)}/react`, { from: ADA.phone, message_id: Number(outbox.at(-1)!.id), emoji: '🔥' })
    const reacted = await nextOf(extensions, 'message.reaction')
    expect(reacted).toMatchObject({ reaction: { emoji: '🔥', from: received.contact.id }, message: { id: reply.json.message_id } })

    // Lookups: from the address book only; a stranger is not imported to be tested.
    expect((await api(key, 'GET', `/accounts/${enc(phone)}/lookup?phone=${enc(ADA.phone)}`)).json).toMatchObject({ on_network: true })
    const unknown = await api(key, 'GET', `/accounts/${enc(phone)}/lookup?phone=${enc('+447700900429')}`)
    expect(unknown.json).toMatchObject({ on_network: null, reason: expect.stringContaining('address book') })

    // beta asks the account to wait: account.at_risk with the wait's end.
    await simPost(suite.sim, `/beta/${enc(phone)}/flood`, { seconds: 30 })
    expect((await api(key, 'POST', '/messages', { account_id: phone, to: { phone: ADA.phone }, text: 'One more thing.' })).status).toBe(202)
    expect(await nextOf(extensions, 'account.at_risk')).toMatchObject({ account_id: phone, signal: 'flood_wait', until: expect.any(String) })
  })
})
