/**
 * Cost at rest (issue 14 §7): Durable Object wake-ups over a simulated idle hour on an injected clock, for an account
 * after a burst and for the relay hub holding an idle link. The account's alarms fire only while something is in
 * hand or due; the hub's only as often as its lease needs. `npm run bench -- idle` runs this file and reports the
 * figures it prints (test/bench/idle.bench.ts).
 */
import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test'
import { env } from 'cloudflare:workers'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { DEFAULT_RELAY_HEARTBEAT_MS, DEFAULT_RELAY_LEASE_MS } from '../../worker/config'
import { relayHub } from '../../worker/lib/objects'
import { call, connectCustom, newTenant, pushInbound, receiverChannel } from './helpers'
import { closeRelaysAfterEach, FakeRelay, issueRelay, uniquePhone } from './relay-helpers'
import { accountObject, createWebhook, settledLog } from './webhook-helpers'

const HOUR = 3_600_000
/** The figure line `npm run bench -- idle` picks up (test/bench/idle.bench.ts). */
const FIGURE_PREFIX = 'idle-hour figure '

const relays = closeRelaysAfterEach()
let T0 = 0

beforeEach(() => {
  // A year ahead, so no alarm fires on its own (the real clock never gets there) and frames outrank heartbeats.
  vi.useFakeTimers({ toFake: ['Date'] })
  T0 = Math.floor((Date.now() + 365 * 86_400_000) / 1000) * 1000
  vi.setSystemTime(T0)
})
afterEach(() => vi.useRealTimers())

type Stub = DurableObjectStub

const alarmOf = (stub: Stub) => runInDurableObject(stub, async (_i, state) => state.storage.getAlarm())

/**
 * Runs every alarm the object sets between now and an hour later, moving the clock to each; `before(at)` plays what
 * the outside world does up to that moment. The count is the object's wake-ups by its own timers.
 */
async function idleHour(stub: Stub, before: (at: number) => Promise<void> = async () => {}): Promise<{ wakes: number; alarmAfter: number | null }> {
  const start = Date.now()
  let wakes = 0
  for (;;) {
    const at = await alarmOf(stub)
    if (at === null || at > start + HOUR) return { wakes, alarmAfter: at }
    await before(at)
    vi.setSystemTime(at)
    expect(await runDurableObjectAlarm(stub)).toBe(true)
    wakes++
  }
}

function figure(name: string, value: number): void {
  console.log(`${FIGURE_PREFIX}${JSON.stringify({ name, value })}`)
}

describe('an idle account', () => {
  it('has no alarm once a burst of inbound messages is stored and fanned out, and no wake-up in the hour after it', async () => {
    const t = await newTenant()
    await connectCustom(t)
    const hook = receiverChannel('idle')
    await createWebhook(t, { url: hook.url, subscribed_to: ['message.received'], name: 'idle' })
    for (let i = 0; i < 5; i++) expect((await pushInbound(t, { body: `burst ${i}`, fromId: 'idle-user' })).status).toBe(200)
    await settledLog(t, 'idle', 5)
    await hook.waitFor(5)
    // Delivered, recorded, nothing due: no timer is left (the fan-out guard and the attempt leases are cleared).
    await vi.waitFor(async () => expect(await alarmOf(accountObject(t))).toBeNull(), { timeout: 2000 })

    const { wakes } = await idleHour(accountObject(t))
    figure('account wake-ups per idle hour after a burst (webhook subscribed, delivered)', wakes)
    expect(wakes).toBe(0)
  })

  it('has no alarm after events that no subscription wants (written dispatched, nothing to fan out)', async () => {
    const t = await newTenant()
    await connectCustom(t)
    for (let i = 0; i < 3; i++) expect((await pushInbound(t, { body: `quiet ${i}`, fromId: 'quiet-user' })).status).toBe(200)
    // The fan-out guard outlives a burst's last commit by FAN_OUT_CLEAR_DELAY_MS (webhooks/outbox.ts), then is gone.
    await vi.waitFor(async () => expect(await alarmOf(accountObject(t))).toBeNull(), { timeout: 2000 })
    const { wakes } = await idleHour(accountObject(t))
    figure('account wake-ups per idle hour after a burst (no webhook)', wakes)
    expect(wakes).toBe(0)
  })

  it('keeps the guard while a delivery is in hand, and keeps the alarm for a retry that is due', async () => {
    const t = await newTenant()
    await connectCustom(t)
    const hook = receiverChannel('idle-slow')
    // The first answer comes late (the attempt is in hand meanwhile), and is a failure: a retry is then pending.
    await hook.behave({ sequence: [{ status: 500, delay_ms: 300 }] })
    await createWebhook(t, { url: hook.url, subscribed_to: ['message.received'], name: 'slow', retries_enabled: true })
    await pushInbound(t, { body: 'in hand', fromId: 'slow-user' })
    const inHand = await alarmOf(accountObject(t))
    expect(inHand).not.toBeNull()
    expect(inHand!).toBeLessThanOrEqual(T0 + 5_000)
    const [row] = await settledLog(t, 'slow', 1)
    // The guard is gone; the alarm now points at the retry, not earlier.
    await vi.waitFor(async () => expect(await alarmOf(accountObject(t))).toBe(Date.parse(row!.next_attempt_at!)), { timeout: 2000 })
  })
})

describe('the relay hub with an idle link', () => {
  const heartbeatMs = DEFAULT_RELAY_HEARTBEAT_MS
  const leaseMs = DEFAULT_RELAY_LEASE_MS

  /** A relay that has said something at `at`, as its heartbeats do (those are answered without waking the hub). */
  async function heardAt(relay: FakeRelay, at: number): Promise<void> {
    vi.setSystemTime(at)
    // Not the exact PING_TEXT, so it reaches the object (and moves `lastSeen` on the injected clock) rather than
    // the auto-response, which stamps the real clock.
    relay.ws.send('{ "type": "ping" }')
    await relay.next('pong')
  }

  async function linkedRelay() {
    const t = await newTenant()
    const { token } = await issueRelay(t.tenantId)
    const relay = await FakeRelay.open(token)
    relays.push(relay)
    const phone = uniquePhone('1666')
    const res = await call('/v1/channels/alpha-web/connections', { method: 'POST', key: t.key, json: { phone_number: phone } })
    expect(res.status).toBe(200)
    const assign = await relay.next('assign', (a) => a.account.accountId === phone)
    await relay.state(assign, { state: 'connected', identifier: phone, upstreamUserId: null })
    return { relay, assign }
  }

  it('sets its alarm no earlier than the lease needs, not at every heartbeat', async () => {
    const { relay } = await linkedRelay()
    await heardAt(relay, T0)
    const at = await alarmOf(relayHub(env))
    expect(at).not.toBeNull()
    expect(at!).toBeGreaterThan(T0 + heartbeatMs)
    expect(at!).toBe(T0 + leaseMs + 1)
  })

  it('wakes only as often as the lease needs over an idle hour, keeps the live link, and cuts it once it falls silent', async () => {
    const { relay } = await linkedRelay()
    const start = Date.now()
    const hub = relayHub(env)
    // The relay beats every heartbeatMs; the last beat before each alarm is the one that counts.
    const { wakes } = await idleHour(hub, (at) => heardAt(relay, start + Math.floor((at - start) / heartbeatMs) * heartbeatMs))
    figure(`relay hub wake-ups per idle hour, one link holding a session (lease ${leaseMs} ms, heartbeat ${heartbeatMs} ms)`, wakes)
    expect(relay.closed).toBeNull()
    // At most one check per lease less one heartbeat (the last beat may come just before a check).
    expect(wakes).toBeLessThanOrEqual(Math.ceil(HOUR / (leaseMs - heartbeatMs)))

    // Silent from here on: the next check cuts it.
    const next = await alarmOf(hub)
    vi.setSystemTime(next!)
    await runDurableObjectAlarm(hub)
    expect((await relay.waitClosed()).code).toBe(4008)
  }, 300_000)
})
