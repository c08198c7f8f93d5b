/**
 * The set-up every relay e2e file shares: the real local server (wrangler dev), the simulated network in this process
 * and a webhook receiver, started before the file's tests and stopped after them; relay processes started through
 * `relay()` are SIGKILLed after each test (or after the file with `keepRelays`), once the test's cleanups have run.
 */
import { afterAll, afterEach, beforeAll, expect } from 'vitest'
import type { SimServer } from '../../relay/sim/network/server'
import { startReceiver, type Receiver } from '../fixtures/receiver'
import { linkBeta } from './beta-login'
import { startLocalServer, type LocalServer } from './local-server'
import { apiOf, linkAlpha, newPhone, spawnRelay, startSim, type Api, type RelayProc } from './relay-harness'
import { subscribeInbox, type WebhookInbox } from './webhook-inbox'

/** wrangler dev's own start deadline (90 s, local-server.ts) plus the migrations before it. */
const SETUP_TIMEOUT_MS = 240_000

export type RelaySuite = {
  server: LocalServer
  sim: SimServer
  receiver: Receiver
  api: Api
  /** A relay process on this server and sim, killed by the suite. */
  relay(token: string, env?: Record<string, string>): RelayProc
  /** Runs after the current test (before its relays are killed), e.g. removing accounts so the next starts clean. */
  cleanup(fn: () => Promise<unknown>): void
  /** A new tenant whose webhook (every event, signed) posts to its own receiver channel. */
  tenantWithHook(): Promise<{ tenantId: string; key: string; hook: WebhookInbox }>
  /** A new tenant with an alpha number linked through a running relay; its account.connected is already taken. */
  linkedAlphaAccount(prefix: string): Promise<{ key: string; phone: string; hook: WebhookInbox }>
  /** The same for beta, logged in by code with `contacts` as its address book, which the gateway has stored. */
  linkedBetaAccount(prefix: string, contacts?: Array<{ phone: string; name?: string }>): Promise<{ key: string; phone: string; hook: WebhookInbox }>
}

export function relaySuite(opts: { keepRelays?: boolean } = {}): RelaySuite {
  const relays: RelayProc[] = []
  const cleanups: Array<() => Promise<unknown>> = []
  const suite: RelaySuite = {
    server: undefined as unknown as LocalServer,
    sim: undefined as unknown as SimServer,
    receiver: undefined as unknown as Receiver,
    api: (...args) => apiOf(suite.server)(...args),
    relay(token, env) {
      const r = spawnRelay(suite.server, token, suite.sim, env)
      relays.push(r)
      return r
    },
    cleanup: (fn) => void cleanups.push(fn),
    async tenantWithHook() {
      const t = await suite.server.newTenant()
      return { ...t, hook: await subscribeInbox(suite.server, suite.receiver, t.key, `hook-${t.tenantId}`) }
    },
    async linkedAlphaAccount(prefix) {
      const { key, hook } = await suite.tenantWithHook()
      const phone = newPhone(prefix)
      await linkAlpha(suite.server, suite.sim, key, phone)
      expect((await hook.next()).event).toBe('account.connected')
      return { key, phone, hook }
    },
    async linkedBetaAccount(prefix, contacts) {
      const { key, hook } = await suite.tenantWithHook()
      const phone = newPhone(prefix)
      await linkBeta(suite.server, suite.sim, key, phone, contacts)
      expect((await hook.next()).event).toBe('account.connected')
      return { key, phone, hook }
    },
  }
  const killRelays = () => Promise.all(relays.splice(0).map((r) => r.kill('SIGKILL')))
  // wrangler dev alone may take most of the default 120 s to come up while other suites load the machine.
  beforeAll(async () => {
    ;[suite.server, suite.sim, suite.receiver] = await Promise.all([startLocalServer(), startSim(), startReceiver()])
  }, SETUP_TIMEOUT_MS)
  afterEach(async () => {
    for (const c of cleanups.splice(0)) await c()
    if (!opts.keepRelays) await killRelays()
  })
  afterAll(async () => {
    await killRelays()
    await Promise.all([suite.sim?.close(), suite.server?.stop(), suite.receiver?.close()])
  })
  return suite
}
