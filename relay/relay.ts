/**
 * A running relay: the link to the Worker, the sessions it runs, the health endpoint, and for the simulator an
 * in-process simulated network when none is configured. `drain()` is what SIGTERM does.
 */
import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import type { Logger } from 'pino'
import { FRAME_PROTOCOL_VERSION } from '../schema/frames'
import type { RelayConfig } from './config'
import { SessionCrypto } from './crypto'
import { channelsOf, driversFor, type DriverSet } from './drivers'
import { startHealthServer } from './health'
import { makeMediaUploader } from './link/media-upload'
import { RelayLink } from './link/socket'
import { createLogger } from './log'
import { RelayMetrics } from './metrics'
import { SessionManager } from './sessions/manager'
import { configureSim } from './sim/config'
import { startSimNetwork } from './sim/network/server'

export const RELAY_VERSION: string = (() => {
  try {
    const pkg: unknown = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'))
    return typeof pkg === 'object' && pkg !== null && 'version' in pkg && typeof pkg.version === 'string' ? pkg.version : 'dev'
  } catch {
    return 'dev'
  }
})()

/** Exit code when the gateway refuses the token: configuration, not a crash (systemd: RestartPreventExitStatus=78). */
export const EXIT_TOKEN_REFUSED = 78

export type Relay = {
  instance: string
  log: Logger
  healthUrl: string | null
  simUrl: string | null
  /** Resolves with the exit code once the relay has stopped for good. */
  done: Promise<number>
  drain(): Promise<void>
}

/** `drivers`: the drivers RELAY_DRIVER names, made by the caller (an e2e test runs the alpha driver over a scripted socket). */
export async function startRelay(config: RelayConfig, inject: { drivers?: DriverSet } = {}): Promise<Relay> {
  const instance = `rel_${randomBytes(9).toString('base64url')}`
  const log = createLogger(config.logLevel, { instance })
  const drivers = inject.drivers ?? driversFor(config)
  const channels = channelsOf(config.driver)

  let simUrl = config.simUrl
  let stopSim: (() => Promise<void>) | null = null
  if (config.driver === 'sim') {
    if (!simUrl) {
      const sim = await startSimNetwork({ host: '127.0.0.1', port: 0 })
      simUrl = sim.url
      stopSim = sim.close
    }
    configureSim({ url: simUrl })
  }

  const meter = new RelayMetrics({ instance, driver: config.driver, version: RELAY_VERSION })
  const uploadMedia = makeMediaUploader({ gatewayUrl: config.connectUrl.replace(/\/relay\/connect$/, ''), token: config.token, maxBytes: config.mediaMaxBytes })
  const manager = new SessionManager({
    driverFor: (ch) => {
      const served = channels.find((c) => c === ch)
      return served ? (drivers[served] ?? null) : null
    },
    crypto: new SessionCrypto(config.sessionKey),
    log,
    uploadMedia,
    meter,
  })
  let finish: (code: number) => void = () => undefined
  const done = new Promise<number>((resolve) => (finish = resolve))

  const link = new RelayLink({
    url: config.connectUrl,
    token: config.token,
    log,
    meter,
    hello: () => ({
      type: 'hello',
      protocol: FRAME_PROTOCOL_VERSION,
      instance,
      version: RELAY_VERSION,
      driver: config.driver,
      channels,
      sessions: manager.running(),
      draining: manager.isDraining,
    }),
    onFrame: (frame) => manager.onFrame(frame),
    onRefused: (reason) => {
      log.fatal({ reason }, 'relay stopped: the gateway refused its token')
      void manager.stopAll('token refused').then(async () => {
        await Promise.all([health?.close(), stopSim?.()])
        finish(EXIT_TOKEN_REFUSED)
      })
    },
  })
  manager.attach(link)
  meter.watch({
    sessions: () => manager.samples(),
    unansweredFrames: () => link.stats().unacked,
    linkState: () => link.linkState,
    draining: () => manager.isDraining,
  })

  const startedAt = Date.now()
  const health =
    config.healthPort === null
      ? null
      : await startHealthServer(
          {
            instance,
            driver: config.driver,
            version: RELAY_VERSION,
            startedAt,
            link: () => link.stats(),
            sessions: () => manager.counts(),
            problems: () => manager.problems(),
            draining: () => manager.isDraining,
            simUrl: simUrl ? `${simUrl}/sim` : null,
          },
          config.healthHost,
          config.healthPort,
          () => meter.render()
        )
  link.start()
  log.info({ driver: config.driver, channels, gateway: new URL(config.connectUrl).host, health: health?.url ?? null }, 'relay started')

  let draining: Promise<void> | null = null
  return {
    instance,
    log,
    healthUrl: health?.url ?? null,
    simUrl: simUrl ? `${simUrl}/sim` : null,
    done,
    drain() {
      draining ??= (async () => {
        log.info({ sessions: manager.size }, 'draining')
        await manager.drain(config.drainTimeoutMs)
        link.stop(1000, 'relay drained')
        await Promise.all([health?.close(), stopSim?.()])
        log.info('drained')
        finish(0)
      })()
      return draining
    },
  }
}
