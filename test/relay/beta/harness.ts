/**
 * Runs the beta driver against the scripted fake network (test/fixtures/beta-network.ts): fake clock (timers and
 * Date), a sealed session store, every state, inbound message, receipt and contact list the connector reports
 * recorded in order, and the log kept so tests can check that no code or password is ever written.
 */
import { vi } from 'vitest'
import { makeBetaDriver } from '../../../relay/beta/client'
import type { FetchMedia } from '../../../relay/alpha/media-fetch'
import type { Connector, ImportedContact, InboundMessage, LinkMethod, Receipt, SessionState } from '../../../relay/connector'
import { FakeBetaNetwork } from '../../fixtures/beta-network'
import { sealedSessionStore, type SealedSessionStore } from '../../fixtures/session-store'
import { capturedLog, settleRounds, useFakeClock } from '../driver-harness'

export const PHONE = '+15551230001'
export const FRIEND = '+15551230002'
export const STRANGER = '+15551230003'

export { useFakeClock }

/** Lets the driver's queues and promise chains run (setImmediate is not faked). */
export const settle = (rounds = 10) => settleRounds(rounds)

export type BetaHarness = Awaited<ReturnType<typeof betaHarness>>

export async function betaHarness(
  opts: {
    net?: FakeBetaNetwork
    linkMethod?: LinkMethod
    forceNew?: boolean
    store?: SealedSessionStore
    fetchMedia?: FetchMedia
    contactsSyncMs?: number
  } = {}
) {
  const net = opts.net ?? new FakeBetaNetwork()
  const states: SessionState[] = []
  const inbound: InboundMessage[] = []
  const receipts: Receipt[] = []
  const contacts: ImportedContact[][] = []
  const { log, logLines } = capturedLog('trace')
  const store = opts.store ?? sealedSessionStore()
  const fetchMedia = opts.fetchMedia ?? vi.fn<FetchMedia>(async () => ({ bytes: Buffer.from('jpeg-bytes'), contentType: 'image/jpeg', fileName: 'photo.jpg' }))
  const driver = makeBetaDriver({ creds: net.creds, makeClient: net.makeClient, fetchMedia, now: () => Date.now(), contactsSyncMs: opts.contactsSyncMs })
  const connector: Connector = driver({
    accountId: PHONE,
    phone: PHONE,
    linkMethod: opts.linkMethod ?? 'code',
    forceNew: opts.forceNew ?? false,
    store,
    events: {
      state: (s) => states.push(s),
      // Stored at the edge at once (what the relay core reports with onCommitted), and recorded without the callback.
      inbound: ({ onCommitted, ...m }) => (inbound.push(m), onCommitted?.()),
      receipt: ({ onCommitted, ...r }) => (receipts.push(r), onCommitted?.()),
      contacts: (c) => contacts.push(c),
    },
    log,
  })
  return { net, connector, store, states, inbound, receipts, contacts, logLines, fetchMedia, last: () => states.at(-1) }
}

/** A connector logged in by code (no password), with FRIEND in its address book. */
export async function loggedIn(opts: { net?: FakeBetaNetwork; store?: SealedSessionStore; fetchMedia?: FetchMedia } = {}) {
  const net = opts.net ?? new FakeBetaNetwork()
  if (!net.accounts.has(PHONE)) {
    const friend = net.addAccount(FRIEND, { firstName: 'Fran', lastName: 'Friend', username: 'fran' })
    net.addAccount(STRANGER, { firstName: 'Sam' })
    net.addAccount(PHONE, { firstName: 'Owner', username: 'owner', contacts: [friend.userId] })
  }
  const h = await betaHarness({ net, store: opts.store, fetchMedia: opts.fetchMedia })
  await h.connector.start()
  if (h.last()?.state === 'code_required') {
    const outcome = await h.connector.login!({ kind: 'code', code: net.codeFor(PHONE) })
    if (outcome.status !== 'connected') throw new Error(`login did not finish: ${JSON.stringify(outcome)}`)
  }
  await settle()
  return h
}
