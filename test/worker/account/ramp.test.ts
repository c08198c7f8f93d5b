import { env } from 'cloudflare:workers'
import { afterEach, describe, expect, it, vi } from 'vitest'
import type { AccountEvent } from '../../../schema/events'
import { accountStub } from '../../../worker/lib/objects'
import { activeDays, NEW_RAMP, rampAllowance, rampConnected, rampDay, rampDisconnected, type Ramp } from '../../../worker/account/ramp'
import { DAY_MS } from '../../../worker/lib/time'
import { body, call, newTenant, send, type TestTenant } from '../helpers'
import { addAccount, eventsOf, ingestVia, setClock } from '../state'

const DAY1 = Date.parse('2026-06-01T10:00:00.000Z')
const day = (n: number, hour = 10) => DAY1 + (n - 1) * DAY_MS + (hour - 10) * 3_600_000
const PLAN_CAP = 10

describe('the alpha warm-up ramp', () => {
  it('is on day 1 before the number ever connected (shown while connecting)', () => {
    expect(rampDay(NEW_RAMP, DAY1)).toBe(1)
    expect(rampAllowance(NEW_RAMP, DAY1, PLAN_CAP)).toBe(0)
  })

  it('allows 0 new contacts on the first two active days, then one more per day up to the plan cap', () => {
    const r = rampConnected(NEW_RAMP, day(1))
    const allowances = Array.from({ length: 14 }, (_, i) => rampAllowance(r, day(i + 1), PLAN_CAP))
    expect(allowances).toEqual([0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 10])
    expect(rampDay(r, day(12))).toBe(12)
  })

  it('changes day at UTC midnight, not 24 hours after connecting', () => {
    const r = rampConnected(NEW_RAMP, Date.parse('2026-06-01T23:59:00.000Z'))
    expect(rampDay(r, Date.parse('2026-06-01T23:59:59.999Z'))).toBe(1)
    expect(rampDay(r, Date.parse('2026-06-02T00:00:00.000Z'))).toBe(2)
    expect(rampDay(r, Date.parse('2026-06-03T00:00:00.000Z'))).toBe(3)
  })

  it('does not count days on which the number was never connected', () => {
    let r: Ramp = rampConnected(NEW_RAMP, day(1))
    r = rampDisconnected(r, day(2))
    expect(activeDays(r, day(5))).toBe(2)
    r = rampConnected(r, day(6))
    expect(rampDay(r, day(6))).toBe(3)
    expect(rampAllowance(r, day(6), PLAN_CAP)).toBe(1)
  })

  it('counts a day once however often the number reconnects on it', () => {
    let r: Ramp = rampConnected(NEW_RAMP, day(1, 8))
    r = rampDisconnected(r, day(1, 9))
    r = rampConnected(r, day(1, 11))
    r = rampDisconnected(r, day(1, 12))
    r = rampConnected(r, day(1, 13))
    expect(rampDay(r, day(1, 14))).toBe(1)
  })

  it('keeps counting from where it stopped when the number reconnects on the day it dropped', () => {
    let r: Ramp = rampConnected(NEW_RAMP, day(1))
    r = rampDisconnected(r, day(3))
    expect(activeDays(r, day(3))).toBe(3)
    r = rampConnected(r, day(3, 20))
    expect(rampDay(r, day(3, 21))).toBe(3)
    expect(rampDay(r, day(4))).toBe(4)
  })

  it('ignores repeated connect or disconnect reports', () => {
    const on = rampConnected(NEW_RAMP, day(1))
    expect(rampConnected(on, day(4))).toBe(on)
    const off = rampDisconnected(on, day(2))
    expect(rampDisconnected(off, day(5))).toBe(off)
  })

  it('never exceeds a smaller plan cap', () => {
    const r = rampConnected(NEW_RAMP, day(1))
    expect(rampAllowance(r, day(30), 3)).toBe(3)
  })
})

describe('the alpha warm-up ramp in the AccountDO', () => {
  afterEach(() => {
    vi.useRealTimers()
  })

  const NUMBER = '+15550001111'
  const at = (n: number, hour = 10) => new Date(day(n, hour))
  const stranger = (n: number) => `+1555777${String(n).padStart(4, '0')}`

  async function limits(t: TestTenant) {
    const list = await body<{ accounts: { id: string; status: string; limits: Record<string, number | null> }[] }>(await call('/v1/accounts', { key: t.key }))
    return list.accounts.find((a) => a.id === NUMBER)!.limits
  }

  async function alphaTenant() {
    setClock(day(1))
    const t = await newTenant()
    const ref = await addAccount(t.tenantId, { id: NUMBER, channel: 'alpha_web' })
    return { t, ref }
  }

  it('shows ramp_day 1 while the number is still connecting', async () => {
    setClock(day(1))
    const t = await newTenant()
    await addAccount(t.tenantId, { id: NUMBER, channel: 'alpha_web', status: 'connecting' })
    expect(await limits(t)).toMatchObject({ ramp_day: 1, new_contacts_cap: 0, sends_cap: 50 })
  })

  it('refuses every new contact on active days 1 and 2, but never a reply to someone who wrote first', async () => {
    const { t, ref } = await alphaTenant()
    await ingestVia(ref, { phone: '+15551230000' }, 'hi, are you open?')
    for (const n of [1, 2]) {
      vi.setSystemTime(at(n))
      expect(await limits(t)).toMatchObject({ ramp_day: n, new_contacts_cap: 0 })
      const refused = await send(t, { to: { phone: stranger(n) }, text: `hello ${n}` })
      expect(refused.status).toBe(429)
      expect(refused.body).toMatchObject({ error_code: 'new_contact_cap', retry_after_s: 14 * 3600 })
      expect(refused.body.error).toMatch(new RegExp(`warm-up day ${n}`))
      expect((await send(t, { to: { phone: '+15551230000' }, text: `reply on day ${n}` })).status).toBe(202)
      await ingestVia(ref, { phone: '+15551230000' }, 'thanks')
    }
  })

  it('allows 1 new contact on day 3 and refuses the 2nd', async () => {
    const { t } = await alphaTenant()
    vi.setSystemTime(at(3))
    expect(await limits(t)).toMatchObject({ ramp_day: 3, new_contacts_cap: 1 })
    expect((await send(t, { to: { phone: stranger(1) }, text: 'first' })).status).toBe(202)
    expect((await send(t, { to: { phone: stranger(2) }, text: 'second' })).body.error_code).toBe('new_contact_cap')
  })

  it('grows about one a day and reaches the plan cap of 10 on day 12', async () => {
    const { t } = await alphaTenant()
    for (const [n, cap] of [
      [4, 2],
      [8, 6],
      [12, 10],
      [20, 10],
    ] as const) {
      vi.setSystemTime(at(n))
      expect(await limits(t), `day ${n}`).toMatchObject({ ramp_day: n, new_contacts_cap: cap })
    }
    vi.setSystemTime(at(12))
    for (let i = 1; i <= 10; i++) expect((await send(t, { to: { phone: stranger(i) }, text: `note ${i}` })).status).toBe(202)
    expect((await send(t, { to: { phone: stranger(11) }, text: 'note 11' })).body.error_code).toBe('new_contact_cap')
  })

  it('does not count days on which the number was disconnected', async () => {
    const { t, ref } = await alphaTenant()
    const stub = accountStub(env, t.tenantId, NUMBER)
    vi.setSystemTime(at(3))
    await stub.connectionChanged(ref, false)
    vi.setSystemTime(at(6))
    await stub.connectionChanged(ref, true)
    expect(await limits(t)).toMatchObject({ ramp_day: 4, new_contacts_cap: 2 })
  })

  it('fires account.limit_reached once when the ramp first refuses a new contact', async () => {
    const { t } = await alphaTenant()
    for (let i = 1; i <= 3; i++) await send(t, { to: { phone: stranger(i) }, text: `try ${i}` })
    const fired = await eventsOf(t.tenantId, 'account.limit_reached')
    expect(fired.map((e) => (e.payload as AccountEvent).account)).toEqual([
      { id: null, channel: null, identifier: null, status: 'limited', reason: 'new_contact_cap' },
    ])
  })

  it('reports ramp_day null and the plan cap for channels without a ramp', async () => {
    setClock(day(1))
    const t = await newTenant()
    await addAccount(t.tenantId, { id: 'custom', channel: 'custom' })
    await addAccount(t.tenantId, { id: '+15550002222', channel: 'sms' })
    const list = await body<{ accounts: { limits: Record<string, number | null> }[] }>(await call('/v1/accounts', { key: t.key }))
    for (const a of list.accounts) expect(a.limits).toMatchObject({ ramp_day: null, new_contacts_cap: 10 })
  })
})
