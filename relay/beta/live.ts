/**
 * What runs while a beta session is live (client.ts goes live after a login or a resume): the health loop (probe,
 * unresponsive, rebuild, recovered), the address-book sync, the catch-up from the stored update state, and what
 * GramJS's link events start: back on the network, the difference is fetched and the probe confirms.
 */
import type { Logger } from 'pino'
import type { ImportedContact } from '../connector'
import type { CatchUp } from './catch-up'
import { startContactSync, type ContactSync } from './contacts'
import { startHealth, type HealthDeps, type HealthTiming } from './health'
import type { PeerDirectory } from './peers'
import type { BetaClient, LinkEvent } from './socket'

export type LiveDeps = {
  /** The client while the session is live (null once it is not). */
  client(): BetaClient | null
  health: HealthTiming
  contactsSyncMs: number
  log: Logger
  peers: PeerDirectory
  catchUp: CatchUp
  reportContacts(list: ImportedContact[]): void
  onFatal: HealthDeps['onFatal']
  onUnresponsive(): void
  /** A probe answered again after the session was reported unresponsive. */
  onRecovered(): void
}

export type Live = {
  readonly contacts: ContactSync
  onLink(event: LinkEvent): void
  stop(): void
}

export function startLive(deps: LiveDeps): Live {
  const health = startHealth({
    client: deps.client,
    timing: deps.health,
    log: deps.log,
    onFatal: deps.onFatal,
    onUnresponsive: deps.onUnresponsive,
    onRecovered: () => {
      deps.onRecovered()
      deps.catchUp.catchUp('the session recovered')
    },
    onState: (state) => deps.catchUp.checkState(state),
  })
  // The address book decides who may be messaged by phone (§4.2): synced now, then kept current.
  const contacts = startContactSync({ client: deps.client, peers: deps.peers, log: deps.log, intervalMs: deps.contactsSyncMs, report: deps.reportContacts })
  void contacts.sync()
  deps.catchUp.start()
  return {
    contacts,
    onLink(event) {
      // Back on the network: fetch what passed meanwhile, and let the probe confirm (and report the recovery).
      if (event === 'connected') {
        deps.catchUp.catchUp('reconnected')
        health.kick()
      } else health.kick(deps.health.probeRetryMs)
    },
    stop() {
      health.stop()
      contacts.stop()
    },
  }
}
