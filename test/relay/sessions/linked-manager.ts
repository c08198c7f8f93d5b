/** A SessionManager attached over a real RelayLink to a fake edge, started and greeted, as the session-core tests use it. */
import { pino } from 'pino'
import { connectUrlFor } from '../../../relay/config'
import type { Driver } from '../../../relay/connector'
import { SessionCrypto } from '../../../relay/crypto'
import { RelayLink } from '../../../relay/link/socket'
import { SessionManager } from '../../../relay/sessions/manager'
import type { RelayChannel } from '../../../schema/frames'
import { startFakeEdge, type FakeEdge } from '../../fixtures/fake-edge'

export type LinkedManager = { edge: FakeEdge; link: RelayLink; manager: SessionManager; stop(): Promise<void> }

export type LinkedManagerOptions = {
  token: string
  leaseMs?: number
  instance: string
  driver: 'alpha' | 'beta' | 'sim'
  channel: RelayChannel
  makeDriver: () => Driver
}

const log = pino({ level: 'silent' })

/** Starts the fake edge and the link, and returns once the edge heard the hello. */
export async function linkedManager(o: LinkedManagerOptions): Promise<LinkedManager> {
  const edge = await startFakeEdge({ token: o.token, leaseMs: o.leaseMs ?? 10_000, heartbeatMs: 100 })
  const driver = o.makeDriver()
  const manager = new SessionManager({ driverFor: (ch) => (ch === o.channel ? driver : null), crypto: new SessionCrypto('k'.repeat(40)), log })
  const link = new RelayLink({
    url: connectUrlFor(edge.url),
    token: o.token,
    log,
    hello: () => ({
      type: 'hello',
      protocol: 1,
      instance: o.instance,
      version: 't',
      driver: o.driver,
      channels: [o.channel],
      sessions: manager.running(),
      draining: manager.isDraining,
    }),
    onFrame: (f) => manager.onFrame(f),
    onRefused: () => undefined,
  })
  manager.attach(link)
  link.start()
  await edge.waitFor((f) => f.type === 'hello')
  return {
    edge,
    link,
    manager,
    async stop() {
      link.stop()
      await manager.stopAll('test over')
      await edge.close()
    },
  }
}
