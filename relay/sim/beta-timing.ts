/**
 * The beta driver's clocks for the simulator, scaled by RELAY_SIM_BETA_TIME_SCALE (0 < scale ≤ 1, default 1): an
 * outage test can then take seconds instead of minutes while every production constant stays as it is. The scale
 * applies to the driver's deadlines, probe intervals and backoff, and to GramJS's pause between connection attempts;
 * the library's own fixed intervals (its 9 s ping) do not scale.
 */
import { z } from 'zod'
import type { BetaTiming } from '../beta/client'
import { CATCH_UP_TIMING } from '../beta/catch-up'
import { HEALTH_TIMING } from '../beta/health'
import { CLIENT_TIMING, type ClientTiming } from '../beta/socket'

const Scale = z.coerce.number().positive().max(1).default(1)

export function simTimeScale(env: Record<string, string | undefined> = process.env): number {
  return Scale.parse(env.RELAY_SIM_BETA_TIME_SCALE)
}

export function scaledBetaTiming(scale: number): { driver: BetaTiming; client: ClientTiming } {
  const ms = (v: number) => Math.max(1, Math.round(v * scale))
  return {
    driver: {
      health: {
        ...HEALTH_TIMING,
        probeIntervalMs: ms(HEALTH_TIMING.probeIntervalMs),
        probeRetryMs: ms(HEALTH_TIMING.probeRetryMs),
        probeTimeoutMs: ms(HEALTH_TIMING.probeTimeoutMs),
        rebuildBackoffMs: HEALTH_TIMING.rebuildBackoffMs.map(ms),
      },
      catchUp: { gapWaitMs: ms(CATCH_UP_TIMING.gapWaitMs), persistEveryMs: ms(CATCH_UP_TIMING.persistEveryMs) },
    },
    client: {
      invokeTimeoutMs: ms(CLIENT_TIMING.invokeTimeoutMs),
      connectTimeoutMs: ms(CLIENT_TIMING.connectTimeoutMs),
      retryDelayMs: ms(CLIENT_TIMING.retryDelayMs),
    },
  }
}
