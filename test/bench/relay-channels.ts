/**
 * The relay bridge figures, measured the same way for every channel the simulator plays (alpha, beta): inbound
 * latency (upstream message → wait returned), inbound throughput (a burst over many sessions, stored in D1, lost and
 * duplicated counted), send latency (POST /v1/messages → the person's phone has it) and send throughput (a burst of
 * API sends over many sessions → every one on the phones, once, in order per session). Upstream messages are
 * injected into the simulated network in-process and the phones' outboxes read in-process, so the control API's
 * HTTP is not in any figure.
 */
import type { SimServer } from '../../relay/sim/network/server'
import { linkBeta } from '../e2e/beta-login'
import type { LocalServer } from '../e2e/local-server'
import { eventually, openLocalD1, simPost } from '../e2e/relay-harness'
import { api } from './bench-kit'

export type Linked = { key: string; phone: string }

/** One channel on the simulator, as the measurements need it. */
export type BenchChannel = {
  name: 'alpha' | 'beta'
  /** A new tenant (the free plan allows one account) with `phone` linked through the relay. */
  link(phone: string): Promise<Linked>
  /** `from` writes `text` to `phone` upstream. */
  inbound(phone: string, from: string, text: string): void
  /** The texts people received from `phone`, in the order the upstream accepted them. */
  sent(phone: string): string[]
}

/**
 * The people sends go to. Each writes to the account first, so no send is a first message to a stranger (the
 * new-contact cap, beta's existing-contact rule) and the loop guard (3 unanswered sends per person) allows 3 each.
 */
export const RECIPIENTS = Array.from({ length: 16 }, (_, i) => `+4477009${String(50 + i).padStart(5, '0')}`)
/** What one account may send in a day on the free plan is 50; 45 keeps within it and within 3 per recipient. */
export const SENDS_PER_ACCOUNT_MAX = 45

const enc = encodeURIComponent

/**
 * A GET through bench-kit's api, once more if the pooled connection was closed under it: wrangler dev drops idle
 * keep-alive sockets after 5 s, and a reused one can race that close. Only idempotent reads are retried.
 */
export async function get(server: LocalServer, key: string, path: string): ReturnType<typeof api> {
  try {
    return await api(server, key, 'GET', path)
  } catch (err) {
    if (!(err instanceof TypeError)) throw err
    return api(server, key, 'GET', path)
  }
}

export function alphaChannel(server: LocalServer, sim: SimServer): BenchChannel {
  const phoneOf = (phone: string) => sim.network.all().find((p) => p.phone === phone)
  return {
    name: 'alpha',
    async link(phone) {
      const { key } = await server.newTenant()
      const r = await api(server, key, 'POST', '/channels/alpha-web/connections', { phone_number: phone })
      if (r.status !== 200) throw new Error(`connect ${phone}: ${r.status} ${JSON.stringify(r.json)}`)
      await eventually(() => phoneOf(phone)?.link, 20_000, `QR for ${phone}`)
      await simPost(sim, `/alpha/${enc(phone)}/link`)
      await eventually(() => phoneOf(phone)?.open.size === 1, 20_000, `${phone} connected`)
      await eventually(async () => (await get(server, key, '/accounts')).json.accounts[0]?.status === 'connected', 20_000, `${phone} account connected`)
      return { key, phone }
    },
    inbound: (phone, from, text) => void sim.network.inbound(phone, { from, text, name: null, mediaUrl: null, lid: null }),
    sent: (phone) => phoneOf(phone)?.outbox.map((e) => e.text) ?? [],
  }
}

export function betaChannel(server: LocalServer, sim: SimServer): BenchChannel {
  const net = sim.network.beta
  return {
    name: 'beta',
    async link(phone) {
      const { key } = await server.newTenant()
      await linkBeta(server, sim, key, phone)
      return { key, phone }
    },
    inbound: (phone, from, text) => void net.inbound(net.account(from), net.account(phone), text),
    sent: (phone) => net.account(phone).outbox.map((e) => e.text),
  }
}

export async function pool<T>(items: T[], concurrency: number, work: (item: T, i: number) => Promise<void>): Promise<void> {
  let next = 0
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) {
        const i = next++
        await work(items[i]!, i)
      }
    })
  )
}

const WARM_UP = 20

/** Upstream message → the open `GET /v1/messages/wait` answered, one at a time (the first rounds warm the isolate). */
export async function inboundLatency(server: LocalServer, ch: BenchChannel, account: Linked, samples: number): Promise<number[]> {
  const { key, phone } = account
  let cursor = (await api(server, key, 'GET', '/messages/wait?timeout_s=0')).json.cursor as string
  const times: number[] = []
  for (let i = 0; i < samples + WARM_UP; i++) {
    let returned = 0
    const waiting = api(server, key, 'GET', `/messages/wait?timeout_s=10&cursor=${cursor}`).then((r) => {
      returned = performance.now()
      return r
    })
    await new Promise((r) => setTimeout(r, 60)) // let the wait reach its Durable Object and park there first
    const sent = performance.now()
    ch.inbound(phone, '+447700900001', `lat ${i}`)
    const r = await waiting
    if (r.json.messages.length !== 1) throw new Error(`${ch.name} latency round ${i} returned ${r.json.messages.length} messages`)
    cursor = r.json.cursor
    if (i >= WARM_UP) times.push(returned - sent)
  }
  return times
}

export type Burst = { rate: number; lost: number; duplicated: number; total: number; outOfOrder?: number }

/**
 * A burst of upstream messages over every account, counted in the local D1 file as they are stored. `tag` marks a
 * further burst on the same accounts (its texts carry it, and loss and duplicates are counted among them alone).
 */
export async function inboundThroughput(server: LocalServer, ch: BenchChannel, accounts: Linked[], perAccount: number, tag = ''): Promise<Burst> {
  const total = accounts.length * perAccount
  const db = openLocalD1(server)
  const phones = accounts.map((a) => a.phone)
  const marks = phones.map(() => '?').join(', ')
  const stored = () =>
    (db.prepare(`SELECT count(*) AS n FROM messages WHERE direction = 'inbound' AND account_id IN (${marks})`).get(...phones) as { n: number }).n
  try {
    const before = stored()
    const started = performance.now()
    for (let n = 0; n < perAccount; n++) {
      for (const phone of phones) ch.inbound(phone, `+4477009${String(n % 40).padStart(5, '0')}`, `${phone}#${tag}${n}`)
      if (n % 25 === 0) await new Promise((r) => setImmediate(r))
    }
    await eventually(() => stored() - before >= total, 120_000, `all ${ch.name} messages stored`)
    const elapsed = (performance.now() - started) / 1000
    await new Promise((r) => setTimeout(r, 1000)) // anything late would show as a duplicate
    const texts = (
      db.prepare(`SELECT text FROM messages WHERE direction = 'inbound' AND account_id IN (${marks}) AND text LIKE ?`).all(...phones, `%#${tag}%`) as Array<{
        text: string
      }>
    ).map((r) => r.text)
    const unique = new Set(texts)
    return { rate: total / elapsed, lost: total - unique.size, duplicated: texts.length - unique.size, total }
  } finally {
    db.close()
  }
}

/** Polls an in-process condition every millisecond: the resolution of the send figures. */
async function until(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = performance.now() + timeoutMs
  while (!check()) {
    if (performance.now() > deadline) throw new Error(`${what} not reached within ${timeoutMs} ms`)
    await new Promise((r) => setTimeout(r, 1))
  }
}

/** Every RECIPIENT writes to each account once, and the gateway has stored it: from then on they are contacts who wrote. */
export async function greet(server: LocalServer, ch: BenchChannel, accounts: Linked[]): Promise<void> {
  for (const { phone } of accounts) for (const from of RECIPIENTS) ch.inbound(phone, from, 'hello')
  const db = openLocalD1(server)
  try {
    const phones = accounts.map((a) => a.phone)
    const count = db.prepare(`SELECT count(*) AS n FROM contacts WHERE first_inbound_at IS NOT NULL AND account_id IN (${phones.map(() => '?').join(', ')})`)
    await eventually(() => (count.get(...phones) as { n: number }).n >= phones.length * RECIPIENTS.length, 60_000, `${ch.name} recipients wrote first`)
  } finally {
    db.close()
  }
}

/** POST /v1/messages → the person's phone has the text, one send at a time, `perAccount` on each account in turn. */
export async function sendLatency(server: LocalServer, ch: BenchChannel, accounts: Linked[], perAccount: number): Promise<number[]> {
  const times: number[] = []
  let i = 0
  for (const { key, phone } of accounts) {
    for (let n = 0; n < perAccount; n++, i++) {
      const text = `send lat ${i}`
      const t0 = performance.now()
      const r = await api(server, key, 'POST', '/messages', { account_id: phone, to: { phone: RECIPIENTS[n % RECIPIENTS.length] }, text })
      if (r.status !== 202) throw new Error(`${ch.name} send ${i}: ${r.status} ${JSON.stringify(r.json)}`)
      await until(() => ch.sent(phone).at(-1) === text, 20_000, `${ch.name} send ${i} on the phone`)
      if (i >= WARM_UP) times.push(performance.now() - t0)
    }
  }
  return times
}

/**
 * `perAccount` sends on every account, posted by `clients` clients at once (each account's sends in order), until
 * every text is on the phones: lost, duplicated, and sends that left out of their posting order.
 */
export async function sendThroughput(server: LocalServer, ch: BenchChannel, accounts: Linked[], perAccount: number, clients: number): Promise<Burst> {
  const total = accounts.length * perAccount
  const before = new Map(accounts.map((a) => [a.phone, ch.sent(a.phone).length]))
  const fresh = (phone: string) => ch.sent(phone).slice(before.get(phone))
  const started = performance.now()
  // One client per account at a time keeps each account's sends in posting order; `clients` accounts go at once.
  await pool(accounts, clients, async ({ key, phone }) => {
    for (let n = 0; n < perAccount; n++) {
      const r = await api(server, key, 'POST', '/messages', { account_id: phone, to: { phone: RECIPIENTS[n % RECIPIENTS.length] }, text: `${phone}>${n}` })
      if (r.status !== 202) throw new Error(`${ch.name} burst send: ${r.status} ${JSON.stringify(r.json)}`)
    }
  })
  await until(() => accounts.every((a) => fresh(a.phone).length >= perAccount), 120_000, `all ${ch.name} sends on the phones`)
  const elapsed = (performance.now() - started) / 1000
  await new Promise((r) => setTimeout(r, 1000)) // anything sent twice shows up by now
  let lost = 0
  let duplicated = 0
  let outOfOrder = 0
  for (const { phone } of accounts) {
    const texts = fresh(phone)
    const unique = new Set(texts)
    lost += perAccount - unique.size
    duplicated += texts.length - unique.size
    texts.forEach((t, i) => {
      if (t !== `${phone}>${i}`) outOfOrder += 1
    })
  }
  return { rate: total / elapsed, lost, duplicated, total, outOfOrder }
}
