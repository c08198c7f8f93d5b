/**
 * Runs the alpha driver against the scripted fake socket: fake clock (timers and Date), a sealed session store,
 * and everything the connector reports recorded in order. `settle()` lets queued event handling finish.
 */
import type { WAMessage } from '@whiskeysockets/baileys'
import pino from 'pino'
import { vi } from 'vitest'
import { loadAlphaAuth } from '../../../relay/alpha/auth-store'
import { makeAlphaDriver } from '../../../relay/alpha/client'
import type { FetchMedia } from '../../../relay/alpha/media-fetch'
import type { FetchVersion } from '../../../relay/alpha/version'
import type { Connector, ImportedContact, InboundMessage, LinkMethod, Receipt, RiskReport, SessionState } from '../../../relay/connector'
import { fakeSockets } from '../../fixtures/alpha-socket'
import { sealedSessionStore, type SealedSessionStore } from '../../fixtures/session-store'
import { capturedLog, settleRounds, useFakeClock } from '../driver-harness'

export const PHONE = '+15551234567'
export const DIGITS = '15551234567'
export const OWN_LID = '99000000000001'

export { useFakeClock }

/** Lets the driver's event queue and the fake's next-tick emits run (setImmediate is not faked). */
export const settle = (rounds = 5) => settleRounds(rounds)

/** A store holding a session the phone already confirmed, as a previous relay process left it. */
export async function linkedStore(digits = DIGITS): Promise<SealedSessionStore> {
  const store = sealedSessionStore()
  const auth = await loadAlphaAuth(store, pino({ level: 'silent' }), { fresh: false })
  auth.state.creds.me = { id: `${digits}:12@s.whatsapp.net`, name: 'Phone', lid: `${OWN_LID}:12@lid` }
  auth.state.creds.account = { details: Buffer.from('details') }
  await auth.saveCreds()
  return store
}

export type Harness = Awaited<ReturnType<typeof harness>>

/** The version fetch when a test does not script one: the network is unreachable, Baileys' built-in version stays. */
const builtInVersion: FetchVersion = async () => ({ version: [2, 3000, 1], isLatest: false })

export async function harness(
  opts: {
    linkMethod?: LinkMethod
    forceNew?: boolean
    store?: SealedSessionStore
    fetchMedia?: FetchMedia
    fetchVersion?: FetchVersion
    logLevel?: pino.Level
    passkeyLinking?: boolean
  } = {}
) {
  const sockets = fakeSockets()
  const states: SessionState[] = []
  const inbound: InboundMessage[] = []
  const receipts: Receipt[] = []
  const contacts: ImportedContact[][] = []
  const risks: RiskReport[] = []
  const { log, logLines } = capturedLog(opts.logLevel ?? 'silent')
  const store = opts.store ?? sealedSessionStore()
  const fetchMedia = opts.fetchMedia ?? vi.fn<FetchMedia>(async () => ({ bytes: Buffer.from('media'), contentType: 'image/jpeg', fileName: 'photo.jpg' }))
  const fetchVersion = opts.fetchVersion ?? vi.fn(builtInVersion)
  const driver = makeAlphaDriver({ makeSocket: sockets.makeSocket, fetchMedia, fetchVersion, now: () => Date.now(), random: () => 0.5 })
  const connector: Connector = driver({
    accountId: PHONE,
    phone: PHONE,
    linkMethod: opts.linkMethod ?? 'qr',
    forceNew: opts.forceNew ?? false,
    passkeyLinking: opts.passkeyLinking ?? false,
    store,
    events: {
      state: (s) => states.push(s),
      inbound: (m) => inbound.push(m),
      // Stored at once, as an edge that acks at once: receipts are compared by their content.
      receipt: ({ onCommitted, ...r }) => {
        receipts.push(r)
        onCommitted?.()
      },
      contacts: (c) => contacts.push(c),
      risk: (r) => risks.push(r),
    },
    log,
  })
  return {
    connector,
    sockets,
    states,
    inbound,
    receipts,
    contacts,
    risks,
    logLines,
    store,
    fetchMedia,
    fetchVersion,
    lastState: () => states.at(-1),
    /** Starts and settles; with a linked store, also opens the first socket. */
    async startOpen(lid = `${OWN_LID}:12@lid`) {
      await connector.start()
      await settle()
      sockets.latest.open({ lid })
      await settle()
    },
  }
}

let seq = 0
/** An incoming 1:1 message as Baileys decodes it (LID addressing with the phone as the alternate, by default). */
export function incoming(over: Partial<WAMessage> & { text?: string } = {}): WAMessage {
  seq += 1
  const { text, key, ...rest } = over
  return {
    key: { remoteJid: '99000000000777@lid', remoteJidAlt: '15550000777@s.whatsapp.net', addressingMode: 'lid', fromMe: false, id: `IN${seq}`, ...key },
    message: { conversation: text ?? 'hello there' },
    messageTimestamp: 1_788_000_000,
    pushName: 'Ada',
    ...rest,
  }
}
