/**
 * The ban-risk signals a driver reports (issue 25), each raised and lifted once: a driver calls `raise` whenever its
 * network warns again and `lift` whenever the warning may be over, and only the changes reach the edge.
 */
import type { RiskReport } from '../connector'

export type RiskSignals = {
  raise(signal: RiskReport['signal'], until: number | null, detail: string): void
  lift(signal: RiskReport['signal']): void
}

export function makeRiskSignals(report: (r: RiskReport) => void): RiskSignals {
  const active = new Map<RiskReport['signal'], number | null>()
  return {
    raise(signal, until, detail) {
      if (active.has(signal) && active.get(signal) === until) return
      active.set(signal, until)
      report({ signal, active: true, until, detail })
    },
    lift(signal) {
      if (!active.delete(signal)) return
      report({ signal, active: false, until: null, detail: 'The warning is over.' })
    },
  }
}
