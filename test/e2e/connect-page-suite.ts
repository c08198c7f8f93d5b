/**
 * The set-up the relay-run connect-page e2e files share: the real local server (wrangler dev) and the simulated
 * network, a relay process in sim mode linked between them, and a phone-sized Chromium; started before the file's
 * tests, stopped after them.
 */
import { afterAll, beforeAll } from 'vitest'
import type { SimServer } from '../../relay/sim/network/server'
import { startLocalServer, type LocalServer } from './local-server'
import { openPhoneBrowser, type PhoneBrowser } from './phone-browser'
import { issueRelayToken, spawnRelay, type RelayProc } from './relay-harness'

/** wrangler dev, a relay and Chromium start together: on a shared 2-core machine that can take minutes. */
const SETUP_TIMEOUT_MS = 300_000

export type ConnectPageSuite = { server: LocalServer; sim: SimServer; relay: RelayProc; device: PhoneBrowser }

export function connectPageSuite(opts: { shots: string; startSim(): Promise<SimServer>; vars?: Record<string, string> }): ConnectPageSuite {
  const suite: ConnectPageSuite = {
    server: undefined as unknown as LocalServer,
    sim: undefined as unknown as SimServer,
    relay: undefined as unknown as RelayProc,
    device: undefined as unknown as PhoneBrowser,
  }
  beforeAll(async () => {
    ;[suite.server, suite.sim] = await Promise.all([startLocalServer({ vars: opts.vars }), opts.startSim()])
    suite.relay = spawnRelay(suite.server, (await issueRelayToken(suite.server)).token, suite.sim)
    suite.device = await openPhoneBrowser(opts.shots)
    await suite.relay.linked
  }, SETUP_TIMEOUT_MS)
  afterAll(async () => {
    await suite.device?.close()
    await suite.relay?.kill('SIGKILL')
    await Promise.all([suite.sim?.close(), suite.server?.stop()])
  })
  return suite
}
