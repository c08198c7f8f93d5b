/**
 * The alpha driver's own overhead, on the scripted fake socket (no alpha servers): how fast an offline backlog
 * (`append`) and live messages (`notify`) become inbound messages, and how well session key writes coalesce when
 * each store write costs one edge round trip (the baseline's p50, as the relay core's store would).
 */
import pino from 'pino'
import { loadAlphaAuth } from '../../relay/alpha/auth-store'
import { makeAlphaDriver } from '../../relay/alpha/client'
import type { InboundMessage } from '../../relay/connector'
import { fakeSockets } from '../fixtures/alpha-socket'
import { sealedSessionStore } from '../fixtures/session-store'
import { ms, percentile, type Bench } from './bench-kit'

const BACKLOG_MESSAGES = 2000
const LIVE_MESSAGES = 1000
const KEY_WRITES = 2000
const KEY_BURST = 50
const KEY_BURST_EVERY_MS = 5
const PHONE = '+15551234567'
const log = pino({ level: 'silent' })

function message(i: number) {
  return {
    key: {
      remoteJid: `9900000000${String(i % 500).padStart(4, '0')}@lid`,
      remoteJidAlt: `1555000${String(i % 500).padStart(4, '0')}@s.whatsapp.net`,
      fromMe: false,
      id: `B${i}`,
    },
    message: { conversation: `message ${i}` },
    messageTimestamp: 1_788_000_000,
    pushName: 'Bench',
  }
}

async function linkedStore() {
  const store = sealedSessionStore()
  const auth = await loadAlphaAuth(store, log, { fresh: false })
  auth.state.creds.me = { id: '15551234567:12@s.whatsapp.net', name: 'Bench', lid: '99000000000001:12@lid' }
  auth.state.creds.account = { details: Buffer.from('d') }
  await auth.saveCreds()
  return store
}

async function openDriver(onInbound: (m: InboundMessage) => void) {
  const sockets = fakeSockets()
  const connector = makeAlphaDriver({ makeSocket: sockets.makeSocket })({
    accountId: PHONE,
    phone: PHONE,
    linkMethod: 'qr',
    forceNew: false,
    store: await linkedStore(),
    // Stored at once, as the relay core reports once the edge acked (a stop waits for that).
    events: {
      state: () => undefined,
      inbound: (m) => {
        m.onCommitted?.()
        onInbound(m)
      },
      receipt: (r) => r.onCommitted?.(),
    },
    log,
  })
  await connector.start()
  await new Promise((r) => setImmediate(r))
  sockets.latest.open()
  await new Promise((r) => setImmediate(r))
  return { connector, socket: sockets.latest }
}

export const alphaDriverBench: Bench = {
  name: 'alpha-driver',
  async run({ baseline }) {
    // Offline backlog: one append upsert with every message, timed until the last inbound callback.
    let backlogDone: () => void = () => undefined
    let delivered = 0
    const backlog = await openDriver(() => {
      if (++delivered === BACKLOG_MESSAGES) backlogDone()
    })
    const all = new Promise<void>((r) => (backlogDone = r))
    const started = performance.now()
    await backlog.socket.receive(
      Array.from({ length: BACKLOG_MESSAGES }, (_, i) => message(i)),
      'append'
    )
    await all
    const backlogMs = performance.now() - started
    await backlog.connector.stop()

    // Live: one notify upsert per message, each timed from the upsert to its inbound callback.
    let resolveOne: () => void = () => undefined
    const live = await openDriver(() => resolveOne())
    const perMessage: number[] = []
    for (let i = 0; i < LIVE_MESSAGES; i++) {
      const got = new Promise<void>((r) => (resolveOne = r))
      const t = performance.now()
      await live.socket.receive([message(BACKLOG_MESSAGES + i)], 'notify')
      await got
      perMessage.push(performance.now() - t)
    }
    await live.connector.stop()

    // Key writes: a burst of Baileys-style keys.set calls against a store whose writes take one edge round trip.
    const store = sealedSessionStore()
    const slowStore = {
      ...store,
      async write(changes: Map<string, string | null>) {
        await new Promise((r) => setTimeout(r, baseline.usageP50Ms))
        return store.write(changes)
      },
    }
    const auth = await loadAlphaAuth(slowStore, log, { fresh: false })
    const writesStart = performance.now()
    const sets: Array<Promise<void>> = []
    // Spread like a busy session: a burst of KEY_BURST sets every KEY_BURST_EVERY_MS (message decryption updates sessions).
    for (let i = 0; i < KEY_WRITES; i++) {
      if (i > 0 && i % KEY_BURST === 0) await new Promise((r) => setTimeout(r, KEY_BURST_EVERY_MS))
      sets.push(Promise.resolve(auth.state.keys.set({ session: { [`peer${i}.0`]: new Uint8Array(64).fill(i % 256) } })))
    }
    await Promise.all(sets)
    const writesMs = performance.now() - writesStart
    const storeWrites = store.writes.length
    // With coalescing, at most one write per round trip (plus the last one) whatever the number of sets.
    const writeBound = Math.ceil(writesMs / baseline.usageP50Ms) + 1

    const backlogRate = (BACKLOG_MESSAGES / backlogMs) * 1000
    return {
      title: 'alpha driver overhead (fake socket)',
      rows: [
        {
          metric: `offline backlog of ${BACKLOG_MESSAGES} messages (append) to inbound`,
          value: `${ms(backlogMs)} (${backlogRate.toFixed(0)} msg/s)`,
          target: '< 2000 ms',
          ok: backlogMs < 2000,
        },
        { metric: 'live message (notify) to inbound, p50', value: ms(percentile(perMessage, 50)) },
        {
          metric: 'live message (notify) to inbound, p99',
          value: ms(percentile(perMessage, 99)),
          target: '< baseline p50',
          ok: percentile(perMessage, 99) < baseline.usageP50Ms,
        },
        {
          metric: `${KEY_WRITES} key writes in bursts of ${KEY_BURST} every ${KEY_BURST_EVERY_MS} ms, store round trip ${ms(baseline.usageP50Ms)}`,
          value: `${storeWrites} store writes, all durable in ${ms(writesMs)}`,
          target: `≤ ${writeBound} (one per round trip)`,
          ok: storeWrites <= writeBound,
        },
      ],
      notes: [
        'Measured in-process on the scripted fake socket: Baileys decryption and the network are not included, only what the driver adds.',
        'Key writes coalesce: whatever arrives while one store write is in flight goes into the next one.',
      ],
    }
  },
}
