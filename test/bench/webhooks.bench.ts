/**
 * Issue #3: webhook fan-out. 1,000 inbound messages on one account with 3 signed subscriptions, each to its own
 * local receiver channel: deliveries per second, event-to-receipt latency (the payload's created_at against the
 * receiver's clock, same machine), and the count proving every event arrived exactly once per subscription, first
 * attempt, with a valid signature.
 */
import { api, ms, percentile, type Bench } from './bench-kit'

const MESSAGES = 1000
const SUBSCRIPTIONS = 3
const PUSH_CLIENTS = 8
const WARMUP = 20

type Payload = { created_at: string; message: { text: string } }

export const webhooksBench: Bench = {
  name: 'webhooks',
  async run({ server, receiver, baseline }) {
    const { key } = await server.newTenant()
    const control = (path: string, init?: RequestInit) => fetch(`${receiver.url}${path}`, init)
    await api(server, key, 'PUT', '/channels/custom', { webhook_url: `${receiver.url}/r/bench-fan-bridge` })
    const channels = Array.from({ length: SUBSCRIPTIONS }, (_, i) => `bench-fan-${i}-${Date.now().toString(36)}`)
    for (const [i, ch] of channels.entries()) {
      const created = await api(server, key, 'POST', '/webhooks', { url: `${receiver.url}/r/${ch}`, subscribed_to: ['message.received'], name: `fan-${i}`, generate_signing_secret: true })
      if (created.status !== 201) throw new Error(`subscription ${i} answered ${created.status}`)
      await control(`/__behaviour/${ch}`, { method: 'PUT', body: JSON.stringify({ secret: created.json.signing_secret }) })
    }

    const waitAll = async (count: number, timeoutMs: number) => {
      const deadline = Date.now() + timeoutMs
      while (Date.now() < deadline && channels.some((ch) => receiver.log(ch).length < count)) await new Promise((r) => setTimeout(r, 10))
    }
    for (let i = 0; i < WARMUP; i++) await api(server, key, 'POST', '/channels/custom/inbound', { customData: { body: `warm ${i}`, fromId: `w${i % 5}` } })
    await waitAll(WARMUP, 30_000)
    for (const ch of channels) await control(`/__log/${ch}`, { method: 'DELETE' })

    const sentAt = new Map<string, number>()
    let next = 0
    const started = Date.now()
    await Promise.all(
      Array.from({ length: PUSH_CLIENTS }, async () => {
        while (next < MESSAGES) {
          const i = next++
          const text = `fan ${i}`
          sentAt.set(text, Date.now())
          const r = await api(server, key, 'POST', '/channels/custom/inbound', { customData: { body: text, fromId: `u${i % 40}`, messageSid: `f${i}` } })
          if (r.status !== 200) throw new Error(`push ${i} answered ${r.status}`)
        }
      })
    )
    const pushedMs = Date.now() - started
    await waitAll(MESSAGES, 120_000)
    // Anything extra (a duplicate, a retry) would arrive after the last expected request: give it a moment.
    await new Promise((r) => setTimeout(r, 1000))

    const eventToReceipt: number[] = []
    const pushToReceipt: number[] = []
    let lastReceipt = 0
    let received = 0
    let unique = 0
    let retried = 0
    let unverified = 0
    for (const ch of channels) {
      const log = receiver.log(ch)
      received += log.length
      const texts = new Set<string>()
      for (const r of log) {
        const p = r.json as Payload
        texts.add(p.message.text)
        if (r.headers['x-webhook-attempt'] !== '1') retried++
        if (r.verified !== true) unverified++
        eventToReceipt.push(r.at - Date.parse(p.created_at))
        const sent = sentAt.get(p.message.text)
        if (sent !== undefined) pushToReceipt.push(r.at - sent)
        lastReceipt = Math.max(lastReceipt, r.at)
      }
      unique += texts.size
    }
    const expected = MESSAGES * SUBSCRIPTIONS
    const lost = expected - unique
    const duplicated = received - unique
    const rate = received / ((lastReceipt - started) / 1000)
    const p50 = percentile(eventToReceipt, 50)
    return {
      title: 'Webhook fan-out (issue #3)',
      rows: [
        { metric: 'baseline GET /v1/usage round trip p50 / p99', value: `${ms(baseline.usageP50Ms)} / ${ms(baseline.usageP99Ms)}` },
        { metric: `deliveries per second (${MESSAGES} inbound × ${SUBSCRIPTIONS} signed subscriptions, ${PUSH_CLIENTS} pushing clients)`, value: `${rate.toFixed(0)} deliveries/s (pushes took ${(pushedMs / 1000).toFixed(1)} s)` },
        { metric: 'event created → receiver got it, p50', value: `${ms(p50)} (${(p50 / baseline.usageP50Ms).toFixed(2)}x baseline)`, target: '< 50 ms', ok: p50 < 50 },
        { metric: 'event created → receiver got it, p99', value: ms(percentile(eventToReceipt, 99)) },
        { metric: 'push sent → receiver got it, p50 / p99', value: `${ms(percentile(pushToReceipt, 50))} / ${ms(percentile(pushToReceipt, 99))}` },
        { metric: 'received / expected (event × subscription pairs)', value: `${received} / ${expected}` },
        { metric: 'lost / duplicated / retried / bad signature', value: `${lost} / ${duplicated} / ${retried} / ${unverified}`, target: '0 / 0 / 0 / 0', ok: lost === 0 && duplicated === 0 && retried === 0 && unverified === 0 },
      ],
      notes: [
        'Latency is measured on one clock: the payload’s created_at is stamped by the AccountDO when the event is written, the receiver stamps arrival; both run on this machine.',
        'Each inbound message is one D1 batch (message + event); the AccountDO fans out after the commit, batching events that arrived meanwhile into one D1 write, and the three POSTs run side by side.',
      ],
    }
  },
}
