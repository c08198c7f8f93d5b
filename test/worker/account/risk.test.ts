// Which ban-risk signals pause new contacts: every one but beta's flood wait, a throttle the relay honours by holding sends.
import { describe, expect, it } from 'vitest'
import { applyRisk, governingRisk, riskView, type RiskEntry } from '../../../worker/account/risk'

const NOW = 1_800_000_000_000

function raised(signal: RiskEntry['signal'], until: number | null): RiskEntry[] {
  return applyRisk([], { signal, active: true, until, detail: 'test' }, NOW).next
}

describe('governingRisk', () => {
  it('lets a flood wait be reported without pausing new contacts', () => {
    const list = raised('flood_wait', NOW + 30_000)
    expect(riskView(list, NOW)).toMatchObject({ at_risk: true, signals: [{ signal: 'flood_wait' }] })
    expect(governingRisk(list, NOW)).toBeNull()
  })

  it('pauses new contacts for every other signal, the longest-lasting one governing', () => {
    const list = [...raised('carrier_filtering', NOW + 60_000), ...raised('flood_wait', NOW + 120_000)]
    expect(governingRisk(list, NOW)).toEqual({ signal: 'carrier_filtering', until: NOW + 60_000 })
    const open = [...list, ...raised('reachout_timelock', null)]
    expect(governingRisk(open, NOW)).toEqual({ signal: 'reachout_timelock', until: null })
    expect(governingRisk(list, NOW + 60_000)).toBeNull()
  })
})
