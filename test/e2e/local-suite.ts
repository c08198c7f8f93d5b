/**
 * The set-up every black-box file shares: one real local server (wrangler dev) and one real HTTP receiver, started
 * before the file's tests and stopped after them.
 */
import { afterAll, beforeAll } from 'vitest'
import { startReceiver, type Receiver } from '../fixtures/receiver'
import { startLocalServer, type LocalServer } from './local-server'

export type LocalSuite = { server: LocalServer; receiver: Receiver; api: LocalServer['api'] }

export function localSuite(): LocalSuite {
  const suite = { api: (...args) => suite.server.api(...args) } as LocalSuite
  beforeAll(async () => {
    ;[suite.server, suite.receiver] = await Promise.all([startLocalServer(), startReceiver()])
  })
  afterAll(async () => {
    await Promise.all([suite.server?.stop(), suite.receiver?.close()])
  })
  return suite
}
