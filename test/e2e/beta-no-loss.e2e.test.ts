/**
 * issue 21 end to end for beta: wrangler dev, real relay processes running the real beta driver with the REAL GramJS
 * client, and the simulator's fake data centre (which pushes an update only to a session connected at that moment).
 * (a) the data centre refuses connections for a while: the account shows the outage and recovers by itself, and the
 * sends queued meanwhile go out once each, in order; (b) the relay is SIGKILLed, 50 messages and 5 read receipts are
 * written while it is down, and after the restart all 50 arrive once, in order, and the receipts move the statuses;
 * (c) a short-form message from someone the new relay never saw arrives with their phone and name; (d) the same as
 * (b) with a gap longer than one difference slice. The relays run the driver's clocks at a tenth of production's
 * (RELAY_SIM_BETA_TIME_SCALE), so the outage takes seconds; the production constants stay.
 */
import { describe, expect, it } from 'vitest'
import { restCalls } from './beta-login'
import { enc, eventually, issueRelayToken, openLocalD1, simGet, simPost, type Json, type RelayProc } from './relay-harness'
import { relaySuite } from './relay-suite'

const suite = relaySuite()
const { api } = suite

const FAST = { RELAY_SIM_BETA_TIME_SCALE: '0.1' }
/** 15 s refused: at the driver's scaled clocks that is 150 s of production time, well past the minute. */
const OUTAGE_S = 15
/** After a SIGKILL the edge waits out the dead relay's 10 s lease before the session moves. */
const RESUME_MS = 60_000
const ADA = { phone: '+447700900411', name: 'Ada Lovelace' }
const BOB = { phone: '+447700900413', name: 'Bob Builder' }
const SAM = { phone: '+447700900412', name: 'Sam Stranger' }

const outbox = async (phone: string) => (await simGet<{ messages: Json[] }>(suite.sim, `/beta/${enc(phone)}/outbox`)).messages

/** The account's inbound texts in the order the gateway stored them. */
function storedInbound(phone: string): string[] {
  const db = openLocalD1(suite.server)
  try {
    const rows = db.prepare("SELECT text FROM messages WHERE account_id = ? AND direction = 'inbound' ORDER BY seq").all(phone) as Array<{ text: string }>
    return rows.map((r) => r.text)
  } finally {
    db.close()
  }
}

/** Sends each text to `to` (3 at most per person who has not written: the loop guard). */
async function sendAll(key: string, phone: string, texts: string[], to = ADA.phone): Promise<string[]> {
  const ids: string[] = []
  for (const text of texts) {
    const res = await api(key, 'POST', '/messages', { account_id: phone, to: { phone: to }, text })
    expect(res.status, JSON.stringify(res.json)).toBe(202)
    ids.push(res.json.message_id)
  }
  return ids
}

const statuses = async (key: string, ids: string[]) => Promise.all(ids.map(async (id) => (await api(key, 'GET', `/messages/${id}`)).json.status))

async function linked(
  prefix: string
): Promise<{ key: string; phone: string; hook: Awaited<ReturnType<typeof suite.tenantWithHook>>['hook']; token: string; relay: RelayProc }> {
  const { token } = await issueRelayToken(suite.server)
  const relay = suite.relay(token, FAST)
  await relay.linked
  const { key, phone, hook } = await suite.linkedBetaAccount(prefix, [ADA, BOB])
  suite.cleanup(() => api(key, 'DELETE', `/channels/beta/${enc(phone)}`))
  return { key, phone, hook, token, relay }
}

/** Kills the relay, writes while it is down, starts another on the same token and waits until the session is live on it. */
async function restartAround(token: string, relay: RelayProc, key: string, phone: string, whileDown: () => Promise<void>): Promise<RelayProc> {
  // The update state is saved within the scaled persist interval after the last update the edge stored.
  await new Promise((r) => setTimeout(r, 500))
  await relay.kill('SIGKILL')
  await whileDown()
  const next = suite.relay(token, FAST)
  await next.linked
  const calls = restCalls(api, key)
  await eventually(async () => (await calls.status(phone)).json.status === 'connected', RESUME_MS, 'the session live on the new relay')
  return next
}

describe('beta loses nothing across outages and restarts (issue 21)', () => {
  it('(a) a refused data centre: the outage shows and clears by itself, and the sends queued meanwhile go out once each, in order', async () => {
    const { key, phone, hook } = await linked('1447')
    const calls = restCalls(api, key)
    expect((await simPost(suite.sim, '/beta/dc/refuse', { seconds: OUTAGE_S })).status).toBe(200)
    const refusedAt = Date.now()
    const ids = await sendAll(key, phone, ['during 1', 'during 2', 'during 3'])

    const account = async () => (await api(key, 'GET', '/accounts')).json.accounts.find((a: Json) => a.id === phone)
    await eventually(async () => (await account())?.status === 'disconnected', OUTAGE_S * 1000, 'the outage on the account')
    expect(await account()).toMatchObject({ status: 'disconnected', status_reason: 'unresponsive' })
    expect((await calls.status(phone)).json).toMatchObject({ status: 'disconnected', reason: 'unresponsive', live: true })
    expect(Date.now() - refusedAt).toBeLessThan(OUTAGE_S * 1000)
    expect(await statuses(key, ids)).toEqual(['queued', 'queued', 'queued'])

    await eventually(
      async () => {
        const s = (await calls.status(phone)).json
        return s.status === 'connected' && s.reason === null && s.live === true
      },
      60_000,
      'the session back after the outage'
    )
    expect(await account()).toMatchObject({ status: 'connected', status_reason: null })
    await eventually(async () => (await statuses(key, ids)).every((s) => s === 'sent'), 60_000, 'every queued send sent')
    expect((await outbox(phone)).map((m) => m.text)).toEqual(['during 1', 'during 2', 'during 3'])
    const sent = () =>
      suite.receiver
        .log(hook.name)
        .map((r) => r.json as Json)
        .filter((p) => p.event === 'message.sent')
        .map((p) => p.message.id)
    await eventually(() => sent().length >= 3, 10_000, 'message.sent for each')
    await new Promise((r) => setTimeout(r, 300))
    expect(sent()).toEqual(ids)
  }, 240_000)

  it("(b, c) a relay SIGKILLed: 50 messages and 5 receipts written meanwhile arrive once, in order; a stranger's short message comes with their name", async () => {
    const { key, phone, hook, token, relay } = await linked('1448')
    const ids = [...(await sendAll(key, phone, ['s1', 's2', 's3'])), ...(await sendAll(key, phone, ['s4', 's5'], BOB.phone))]
    await eventually(async () => (await statuses(key, ids)).every((s) => s === 'sent'), 30_000, 'the five sends sent')
    const upstream = (await outbox(phone)).map((m) => String(m.id))
    const written = Array.from({ length: 50 }, (_, i) => `while down ${i + 1}`)

    await restartAround(token, relay, key, phone, async () => {
      for (const text of written) expect((await simPost(suite.sim, `/beta/${enc(phone)}/inbound`, { from: ADA.phone, text })).status).toBe(200)
      for (const id of upstream) expect((await simPost(suite.sim, `/beta/${enc(phone)}/receipt`, { message_id: id, status: 'read' })).status).toBe(200)
    })
    await eventually(() => storedInbound(phone).length >= written.length, 60_000, 'the 50 messages stored')
    await eventually(async () => (await statuses(key, ids)).every((s) => s === 'read'), 30_000, 'the five sends read')
    await new Promise((r) => setTimeout(r, 500))
    expect(storedInbound(phone)).toEqual(written)

    // (c) The new relay has seen nothing of Sam: the short form carries no user, so the driver fetches it with them.
    await simPost(suite.sim, `/beta/${enc(phone)}/inbound`, { from: SAM.phone, text: 'short hello', name: SAM.name, short: true })
    const got = await eventually(
      () =>
        suite.receiver
          .log(hook.name)
          .map((r) => r.json as Json)
          .find((p) => p.event === 'message.received' && p.message.text === 'short hello'),
      30_000,
      'the short message'
    )
    expect(got.contact).toMatchObject({ phone: SAM.phone, name: SAM.name })
  }, 300_000)

  it('(d) a gap longer than one difference slice: every message written while the relay was down arrives once, in order', async () => {
    const { key, phone, token, relay } = await linked('1449')
    await simPost(suite.sim, '/beta/dc/config', { difference_slice: 20 })
    suite.cleanup(() => simPost(suite.sim, '/beta/dc/config', { difference_slice: 100 }))
    const written = Array.from({ length: 50 }, (_, i) => `sliced ${i + 1}`)
    await restartAround(token, relay, key, phone, async () => {
      for (const text of written) expect((await simPost(suite.sim, `/beta/${enc(phone)}/inbound`, { from: ADA.phone, text })).status).toBe(200)
    })
    await eventually(() => storedInbound(phone).length >= written.length, 60_000, 'the 50 messages stored')
    await new Promise((r) => setTimeout(r, 500))
    expect(storedInbound(phone)).toEqual(written)
    expect((await simGet(suite.sim, '/beta/dc')).stats).toBeDefined()
  }, 300_000)
})
