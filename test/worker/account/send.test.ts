/**
 * The send step in the AccountDO, driven through POST /v1/messages against the real DO and D1: every limit at its
 * boundary, the UTC-day rollover on an injected clock, refusals that change nothing, and account.limit_reached.
 */
import { afterEach, describe, expect, it, vi } from 'vitest'
import type { AccountEvent } from '../../../schema/events'
import { admin, body, call, connectCustom, newTenant, pushInbound, send, type TestTenant } from '../helpers'
import { contactRow, eventsOf, HOUR_MS, setClock } from '../state'
import { customAccountEvent } from '../webhook-helpers'
import { contactIdFor } from '../../../worker/lib/ids'

afterEach(() => {
  vi.useRealTimers()
})

/** 22:00 UTC: a daily-limit refusal is then 7200 s from the next UTC day. */
const EVENING = '2030-01-15T22:00:00.000Z'

async function customTenant(): Promise<TestTenant> {
  const t = await newTenant()
  await connectCustom(t)
  return t
}

/** People who wrote first (so neither the new-contact cap nor the opener rule applies to them). */
async function wroteFirst(t: TestTenant, ids: string[]) {
  for (const fromId of ids) expect((await pushInbound(t, { body: `hello from ${fromId}`, fromId })).status).toBe(200)
}

async function usage(t: TestTenant) {
  return body<{ sends: number; new_contacts: number; status: string; suspended_reason: string | null; day: string }>(await call('/v1/usage', { key: t.key }))
}

const people = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}`)

describe('daily send cap', () => {
  it('accepts the 50th send of a UTC day and refuses the 51st with daily_send_cap and retry_after_s to midnight', async () => {
    setClock(EVENING)
    const t = await customTenant()
    const ids = people('p', 17)
    await wroteFirst(t, ids)
    for (let i = 0; i < 50; i++) {
      const r = await send(t, { to: { external_id: ids[i % 17] }, text: `reply ${i}` })
      expect(r.status, `send ${i + 1}`).toBe(202)
    }
    const refused = await send(t, { to: { external_id: ids[16] }, text: 'one too many' })
    expect(refused.status).toBe(429)
    expect(refused.body).toEqual({ error_code: 'daily_send_cap', error: expect.any(String), retry_after_s: 7200 })
    expect(refused.headers.get('Retry-After')).toBe('7200')
    expect((await usage(t)).sends).toBe(50)
  })

  it('starts over at the next UTC midnight', async () => {
    setClock('2030-01-15T23:59:59.000Z')
    const t = await customTenant()
    const ids = people('q', 17)
    await wroteFirst(t, ids)
    for (let i = 0; i < 50; i++) expect((await send(t, { to: { external_id: ids[i % 17] }, text: `r${i}` })).status).toBe(202)
    const late = await send(t, { to: { external_id: ids[16] }, text: 'late' })
    expect(late.status).toBe(429)
    expect(late.body.retry_after_s).toBe(1)

    vi.setSystemTime(new Date('2030-01-16T00:00:00.000Z'))
    expect((await send(t, { to: { external_id: ids[16] }, text: 'new day' })).status).toBe(202)
    expect(await usage(t)).toMatchObject({ day: '2030-01-16', sends: 1 })
  })

  it('lets exactly 50 of 60 concurrent sends through', async () => {
    setClock(EVENING)
    const t = await customTenant()
    const ids = people('c', 20)
    await wroteFirst(t, ids)
    const results = await Promise.all(Array.from({ length: 60 }, (_, i) => send(t, { to: { external_id: ids[i % 20] }, text: `burst ${i}` })))
    const statuses = results.map((r) => r.status)
    expect(statuses.filter((s) => s === 202)).toHaveLength(50)
    expect(results.filter((r) => r.status === 429).map((r) => r.body.error_code)).toEqual(Array(10).fill('daily_send_cap'))
    expect((await usage(t)).sends).toBe(50)
  })
})

describe('limits across a disconnect', () => {
  it("keep today's counters when the custom channel is removed and set again", async () => {
    setClock(EVENING)
    const t = await newTenant()
    const ch = await connectCustom(t)
    for (let i = 1; i <= 10; i++) expect((await send(t, { to: { external_id: `r${i}` }, text: `hello ${i}` })).status).toBe(202)
    expect((await call('/v1/channels/custom', { method: 'DELETE', key: t.key })).status).toBe(200)
    expect((await call('/v1/channels/custom', { method: 'PUT', key: t.key, json: { webhook_url: ch.url } })).status).toBe(200)
    expect(await usage(t)).toMatchObject({ sends: 10, new_contacts: 10 })
    expect((await send(t, { to: { external_id: 'r11' }, text: 'hello 11' })).body.error_code).toBe('new_contact_cap')
  })

  it('keep the loop guard and the opener window when the custom channel is removed and set again', async () => {
    setClock(EVENING)
    const t = await newTenant()
    const ch = await connectCustom(t)
    for (let i = 1; i <= 3; i++) await send(t, { to: { external_id: 'pat' }, text: `ping ${i}` })
    for (let i = 1; i <= 5; i++) await send(t, { to: { external_id: `o${i}` }, text: 'Same opener' })
    await call('/v1/channels/custom', { method: 'DELETE', key: t.key })
    await call('/v1/channels/custom', { method: 'PUT', key: t.key, json: { webhook_url: ch.url } })
    expect((await send(t, { to: { external_id: 'pat' }, text: 'ping 4' })).body.error_code).toBe('loop_guard')
    expect((await send(t, { to: { external_id: 'o6' }, text: 'Same opener' })).body.error_code).toBe('opener_burst')
  })
})

describe('new-contact cap', () => {
  it('accepts the 10th new contact of a UTC day and refuses the 11th with new_contact_cap', async () => {
    setClock(EVENING)
    const t = await customTenant()
    for (let i = 1; i <= 10; i++) {
      expect((await send(t, { to: { external_id: `stranger-${i}` }, text: `hello number ${i}` })).status, `new contact ${i}`).toBe(202)
    }
    const refused = await send(t, { to: { external_id: 'stranger-11' }, text: 'hello number 11' })
    expect(refused.status).toBe(429)
    expect(refused.body).toEqual({ error_code: 'new_contact_cap', error: expect.any(String), retry_after_s: 7200 })
    expect(await usage(t)).toMatchObject({ sends: 10, new_contacts: 10 })
  })

  it('still accepts replies to people who wrote first, and further messages to contacts already opened', async () => {
    setClock(EVENING)
    const t = await customTenant()
    for (let i = 1; i <= 10; i++) expect((await send(t, { to: { external_id: `s${i}` }, text: `opener ${i}` })).status).toBe(202)
    await wroteFirst(t, ['friend'])
    expect((await send(t, { to: { external_id: 'friend' }, text: 'reply' })).status).toBe(202)
    expect((await send(t, { to: { external_id: 's3' }, text: 'follow-up' })).status).toBe(202)
    expect(await usage(t)).toMatchObject({ sends: 12, new_contacts: 10 })
  })

  it('never counts people who wrote first, however many', async () => {
    setClock(EVENING)
    const t = await customTenant()
    const ids = people('w', 12)
    await wroteFirst(t, ids)
    for (const id of ids) expect((await send(t, { to: { external_id: id }, text: `thanks ${id}` })).status).toBe(202)
    expect(await usage(t)).toMatchObject({ sends: 12, new_contacts: 0 })
  })

  it('starts over at the next UTC midnight', async () => {
    setClock('2030-01-15T23:30:00.000Z')
    const t = await customTenant()
    for (let i = 1; i <= 10; i++) expect((await send(t, { to: { external_id: `n${i}` }, text: `hi ${i}` })).status).toBe(202)
    expect((await send(t, { to: { external_id: 'n11' }, text: 'hi 11' })).body).toMatchObject({ error_code: 'new_contact_cap', retry_after_s: 1800 })
    vi.setSystemTime(new Date('2030-01-16T00:00:00.000Z'))
    expect((await send(t, { to: { external_id: 'n11' }, text: 'hi 11' })).status).toBe(202)
  })
})

describe('loop guard', () => {
  it('accepts the 3rd send since the person last wrote and refuses the 4th with loop_guard', async () => {
    const t = await customTenant()
    await wroteFirst(t, ['ann'])
    for (let i = 1; i <= 3; i++) expect((await send(t, { to: { external_id: 'ann' }, text: `msg ${i}` })).status).toBe(202)
    const refused = await send(t, { to: { external_id: 'ann' }, text: 'msg 4' })
    expect(refused.status).toBe(429)
    expect(refused.body).toEqual({ error_code: 'loop_guard', error: expect.any(String) })
  })

  it('starts over when the person writes again', async () => {
    const t = await customTenant()
    await wroteFirst(t, ['bob'])
    for (let i = 1; i <= 3; i++) await send(t, { to: { external_id: 'bob' }, text: `a${i}` })
    expect((await send(t, { to: { external_id: 'bob' }, text: 'a4' })).status).toBe(429)
    await pushInbound(t, { body: 'ok go on', fromId: 'bob' })
    for (let i = 1; i <= 3; i++) expect((await send(t, { to: { external_id: 'bob' }, text: `b${i}` })).status).toBe(202)
    expect((await send(t, { to: { external_id: 'bob' }, text: 'b4' })).body.error_code).toBe('loop_guard')
  })

  // The AccountDO writes a reset once for a run of messages (storage.ts knownReset); a send must make the next one count.
  it('starts over each time the person writes again after sends, however many messages they wrote in a row', async () => {
    const t = await customTenant()
    for (let round = 1; round <= 3; round++) {
      for (let i = 1; i <= round; i++) await pushInbound(t, { body: `round ${round} message ${i}`, fromId: 'cy' })
      for (let i = 1; i <= 3; i++) expect((await send(t, { to: { external_id: 'cy' }, text: `r${round} s${i}` })).status).toBe(202)
      expect((await send(t, { to: { external_id: 'cy' }, text: `r${round} s4` })).body.error_code).toBe('loop_guard')
    }
  })

  it('also stops the 4th message to someone who never wrote', async () => {
    const t = await customTenant()
    for (let i = 1; i <= 3; i++) expect((await send(t, { to: { external_id: 'cold' }, text: `ping ${i}` })).status).toBe(202)
    expect((await send(t, { to: { external_id: 'cold' }, text: 'ping 4' })).body.error_code).toBe('loop_guard')
  })

  it('is not restarted by a re-pushed duplicate of an old inbound message', async () => {
    const t = await customTenant()
    await pushInbound(t, { body: 'hi', fromId: 'dup', messageSid: 'sid-1' })
    for (let i = 1; i <= 3; i++) await send(t, { to: { external_id: 'dup' }, text: `m${i}` })
    const again = await pushInbound(t, { body: 'hi', fromId: 'dup', messageSid: 'sid-1' })
    expect(again.body.duplicate).toBe(true)
    expect((await send(t, { to: { external_id: 'dup' }, text: 'm4' })).body.error_code).toBe('loop_guard')
  })
})

describe('opener burst', () => {
  it('accepts the same first message to 5 people who never wrote and refuses the 6th with opener_burst', async () => {
    setClock(EVENING)
    const t = await customTenant()
    for (let i = 1; i <= 5; i++) expect((await send(t, { to: { external_id: `lead-${i}` }, text: 'Big sale today!' })).status).toBe(202)
    const refused = await send(t, { to: { external_id: 'lead-6' }, text: '  big SALE today! ' })
    expect(refused.status).toBe(429)
    expect(refused.body).toEqual({ error_code: 'opener_burst', error: expect.any(String) })
  })

  it('suspends the tenant: usage says suspended, the account is restricted, and every later send gets account_suspended', async () => {
    setClock(EVENING)
    const t = await customTenant()
    await wroteFirst(t, ['regular'])
    for (let i = 1; i <= 6; i++) await send(t, { to: { external_id: `x${i}` }, text: 'Same opener' })
    expect(await usage(t)).toMatchObject({ status: 'suspended', suspended_reason: 'opener_burst', sends: 5 })
    const accounts = await body<{ accounts: { status: string; status_reason: string | null }[] }>(await call('/v1/accounts', { key: t.key }))
    expect(accounts.accounts[0]).toMatchObject({ status: 'restricted', status_reason: 'opener_burst' })
    const blocked = await send(t, { to: { external_id: 'regular' }, text: 'a reply' })
    expect(blocked.status).toBe(403)
    expect(blocked.body).toEqual({ error_code: 'account_suspended', error: expect.any(String) })
    const restricted = await eventsOf(t.tenantId, 'account.restricted')
    expect(restricted.map((e) => e.payload)).toEqual([customAccountEvent('account.restricted', EVENING, 'restricted', 'opener_burst')])
  })

  it('sends again after the service lifts the suspension, and emits account.connected', async () => {
    setClock(EVENING)
    const t = await customTenant()
    await wroteFirst(t, ['regular'])
    for (let i = 1; i <= 6; i++) await send(t, { to: { external_id: `y${i}` }, text: 'Same opener' })
    const lifted = await admin(`/admin/tenants/${t.tenantId}`, { method: 'PATCH', json: { status: 'active' } })
    expect(await body(lifted)).toMatchObject({ status: 'active', suspended_reason: null })
    expect((await send(t, { to: { external_id: 'regular' }, text: 'back' })).status).toBe(202)
    expect(await usage(t)).toMatchObject({ status: 'active' })
    const connected = await eventsOf(t.tenantId, 'account.connected')
    expect(connected.map((e) => (e.payload as AccountEvent).account.reason).sort()).toEqual([null, 'suspension_lifted'])
  })

  it('counts only openers within the last 30 minutes', async () => {
    setClock(EVENING)
    const early = await customTenant()
    const late = await customTenant()
    for (const t of [early, late]) {
      for (let i = 1; i <= 5; i++) expect((await send(t, { to: { external_id: `o${i}` }, text: 'Window test' })).status).toBe(202)
    }
    vi.setSystemTime(Date.parse(EVENING) + 30 * 60_000 - 1)
    expect((await send(early, { to: { external_id: 'o6' }, text: 'Window test' })).body.error_code).toBe('opener_burst')
    vi.setSystemTime(Date.parse(EVENING) + 30 * 60_000)
    expect((await send(late, { to: { external_id: 'o6' }, text: 'Window test' })).status).toBe(202)
  })

  it('does not count different first messages, or the same text to people who wrote first', async () => {
    setClock(EVENING)
    const t = await customTenant()
    const ids = people('f', 7)
    await wroteFirst(t, ids)
    for (const id of ids) expect((await send(t, { to: { external_id: id }, text: 'Thanks for writing!' })).status).toBe(202)
    for (let i = 1; i <= 7; i++) expect((await send(t, { to: { external_id: `new${i}` }, text: `Personal note ${i}` })).status).toBe(202)
    expect(await usage(t)).toMatchObject({ status: 'active' })
  })
})

describe('refused sends', () => {
  it('change no counter and store nothing', async () => {
    setClock(EVENING)
    const t = await customTenant()
    for (let i = 1; i <= 10; i++) await send(t, { to: { external_id: `z${i}` }, text: `hey ${i}` })
    const before = await usage(t)
    const listBefore = await body<{ messages: unknown[] }>(await call('/v1/messages?limit=100', { key: t.key }))

    expect((await send(t, { to: { external_id: 'z11' }, text: 'hey 11' })).body.error_code).toBe('new_contact_cap')
    for (let i = 1; i <= 2; i++) await send(t, { to: { external_id: 'z1' }, text: `more ${i}` })
    expect((await send(t, { to: { external_id: 'z1' }, text: 'more 3' })).body.error_code).toBe('loop_guard')

    expect(await usage(t)).toMatchObject({ sends: before.sends + 2, new_contacts: before.new_contacts })
    const listAfter = await body<{ messages: unknown[] }>(await call('/v1/messages?limit=100', { key: t.key }))
    expect(listAfter.messages).toHaveLength(listBefore.messages.length + 2)
    expect(await contactRow(t.tenantId, await contactIdFor(t.tenantId, 'custom', { kind: 'external', value: 'z11' }))).toBeUndefined()
  })

  it('do not use up the refused person: the new contact refused today is accepted tomorrow as a new contact', async () => {
    setClock(EVENING)
    const t = await customTenant()
    for (let i = 1; i <= 10; i++) await send(t, { to: { external_id: `k${i}` }, text: `hi ${i}` })
    expect((await send(t, { to: { external_id: 'k11' }, text: 'hi 11' })).status).toBe(429)
    vi.setSystemTime(Date.parse(EVENING) + 3 * HOUR_MS)
    expect((await send(t, { to: { external_id: 'k11' }, text: 'hi 11' })).status).toBe(202)
    expect(await usage(t)).toMatchObject({ new_contacts: 1 })
  })
})

describe('account.limit_reached', () => {
  it('fires once per limit per UTC day, with null ids and status limited', async () => {
    setClock(EVENING)
    const t = await customTenant()
    for (let i = 1; i <= 10; i++) await send(t, { to: { external_id: `l${i}` }, text: `yo ${i}` })
    for (let i = 11; i <= 13; i++) expect((await send(t, { to: { external_id: `l${i}` }, text: `yo ${i}` })).status).toBe(429)
    const ids = people('lw', 14)
    await wroteFirst(t, ids)
    for (let i = 0; i < 40; i++) expect((await send(t, { to: { external_id: ids[i % 14] }, text: `r${i}` })).status).toBe(202)
    for (let i = 0; i < 3; i++) expect((await send(t, { to: { external_id: 'lw13' }, text: 'over' })).body.error_code).toBe('daily_send_cap')

    const fired = await eventsOf(t.tenantId, 'account.limit_reached')
    expect(fired.map((e) => (e.payload as AccountEvent).account.reason).sort()).toEqual(['daily_send_cap', 'new_contact_cap'])
    for (const e of fired) {
      // The outbox row still names the account (for delivery bookkeeping); only the payload hides it.
      expect(e.accountId).toBe('custom')
      expect(e.payload).toEqual({
        event: 'account.limit_reached',
        created_at: EVENING,
        account_id: null,
        channel: null,
        account: { id: null, channel: null, identifier: null, status: 'limited', reason: (e.payload as AccountEvent).account.reason },
      })
    }

    vi.setSystemTime(Date.parse(EVENING) + 3 * HOUR_MS)
    for (let i = 1; i <= 11; i++) await send(t, { to: { external_id: `day2-${i}` }, text: `morning ${i}` })
    const again = await eventsOf(t.tenantId, 'account.limit_reached')
    expect(again.map((e) => (e.payload as AccountEvent).account.reason).sort()).toEqual(['daily_send_cap', 'new_contact_cap', 'new_contact_cap'])
  })

  it('fires when the 50th send reaches the cap, before any refusal', async () => {
    setClock(EVENING)
    const t = await customTenant()
    const ids = people('e', 17)
    await wroteFirst(t, ids)
    for (let i = 0; i < 49; i++) await send(t, { to: { external_id: ids[i % 17] }, text: `r${i}` })
    expect(await eventsOf(t.tenantId, 'account.limit_reached')).toHaveLength(0)
    await send(t, { to: { external_id: ids[49 % 17] }, text: 'r49' })
    expect(await eventsOf(t.tenantId, 'account.limit_reached')).toHaveLength(1)
  })
})
