/**
 * Runs the beta driver with the REAL GramJS client against the simulator's fake data centre, in-process, for the loss
 * paths (outages, gaps, restarts): the simulated network and its data centre, a sealed session store that outlives
 * each connector (a restart or a failover is a new connector on the same store), and everything a connector reports
 * recorded in order. Inbound messages and receipts are acknowledged as the edge does once it stored them
 * (`onCommitted`). Deadlines and probe intervals are scaled down so an outage takes seconds, not minutes; the
 * production constants stay in the modules.
 */
import pino from 'pino'
import { makeBetaDriver } from '../../../relay/beta/client'
import { makeGramClient } from '../../../relay/beta/socket'
import type { Connector, InboundMessage, OutboundMessage, Receipt, SessionState } from '../../../relay/connector'
import { simGramOptions } from '../../../relay/sim/beta-dc-link'
import { configureSim } from '../../../relay/sim/config'
import { SIM_BETA_CREDS } from '../../../relay/sim/network/beta-network'
import { startSimNetwork, type SimServer } from '../../../relay/sim/network/server'
import { sealedSessionStore, type SealedSessionStore } from '../../fixtures/session-store'

export const PHONE = '+15557720001'
export const FRIEND = '+15557720002'
export const STRANGER = '+15557720003'

/** Supervision at a tenth of production's pace, and GramJS's own pause between attempts shortened alike. */
export const FAST = {
  client: { invokeTimeoutMs: 3_000, connectTimeoutMs: 3_000, retryDelayMs: 100 },
  health: { probeIntervalMs: 1_000, probeRetryMs: 300, probeTimeoutMs: 1_000, failuresMax: 2, rebuildBackoffMs: [200, 500, 1_000] },
  catchUp: { gapWaitMs: 200, persistEveryMs: 100 },
}

export type Run = {
  c: Connector
  states: SessionState[]
  inbound: InboundMessage[]
  receipts: Receipt[]
  last(): SessionState | undefined
}

export type DcHarness = {
  sim: SimServer
  store: SealedSessionStore
  /** A new connector (a relay) on the shared store; `start` is called. */
  run(): Promise<Run>
  /** Logs PHONE in by code on a new connector, with FRIEND in its address book. */
  loggedIn(): Promise<Run>
  control(method: string, path: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }>
  /** `from` writes to PHONE through the control API; answers the upstream id. */
  write(text: string, from?: string, extra?: Record<string, unknown>): Promise<string>
  stopAll(): Promise<void>
}

export async function until(cond: () => boolean, timeoutMs = 10_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`${what} not met within ${timeoutMs} ms`)
    await new Promise((r) => setTimeout(r, 10))
  }
}

export function msg(id: string, to: OutboundMessage['to'], text = `text ${id}`): OutboundMessage {
  return { messageId: id, to, text, mediaUrl: null }
}

export async function dcHarness(): Promise<DcHarness> {
  const sim = await startSimNetwork({ betaTiming: { codeMs: 60_000, qrMs: 30_000 } })
  configureSim({ url: sim.url })
  const store = sealedSessionStore()
  const running: Connector[] = []
  const driver = makeBetaDriver({
    creds: SIM_BETA_CREDS,
    makeClient: makeGramClient(SIM_BETA_CREDS, { ...simGramOptions(), timing: FAST.client }),
    timing: { health: FAST.health, catchUp: FAST.catchUp },
  })
  const control: DcHarness['control'] = async (method, path, body) => {
    const res = await fetch(`${sim.url}/sim${path}`, {
      method,
      headers: { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    return { status: res.status, json: (await res.json()) as Record<string, unknown> }
  }
  const h: DcHarness = {
    sim,
    store,
    control,
    async run() {
      const seen = { states: [] as SessionState[], inbound: [] as InboundMessage[], receipts: [] as Receipt[] }
      const c = driver({
        accountId: PHONE,
        phone: PHONE,
        linkMethod: 'code',
        forceNew: false,
        store,
        log: pino({ level: 'silent' }),
        events: {
          state: (s) => seen.states.push(s),
          inbound: (m) => (seen.inbound.push(m), m.onCommitted?.()),
          receipt: (r) => (seen.receipts.push(r), r.onCommitted?.()),
        },
      })
      running.push(c)
      await c.start()
      return { c, ...seen, last: () => seen.states.at(-1) }
    },
    async loggedIn() {
      await control('POST', `/beta/${encodeURIComponent(PHONE)}/contacts`, { contacts: [{ phone: FRIEND, name: 'Fran Friend' }] })
      const r = await h.run()
      if (r.last()?.state !== 'code_required') throw new Error(`no code asked: ${JSON.stringify(r.last())}`)
      const code = await control('GET', `/beta/${encodeURIComponent(PHONE)}/code`)
      const outcome = await r.c.login!({ kind: 'code', code: String(code.json.code) })
      if (outcome.status !== 'connected') throw new Error(`login did not finish: ${JSON.stringify(outcome)}`)
      // Connected and the address book synced (FRIEND can be written to by phone).
      await until(() => r.last()?.state === 'connected')
      await new Promise((res) => setTimeout(res, 300))
      return r
    },
    async write(text, from = FRIEND, extra = {}) {
      const res = await control('POST', `/beta/${encodeURIComponent(PHONE)}/inbound`, { from, text, ...extra })
      if (res.status !== 200) throw new Error(`inbound: ${res.status} ${JSON.stringify(res.json)}`)
      return String(res.json.message_id)
    },
    async stopAll() {
      for (const c of running.splice(0)) await c.stop()
      await sim.close()
    },
  }
  return h
}
