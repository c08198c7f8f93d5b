// The relay's /healthz report: link state, sessions by state and by problem, and problems only the operator can fix.
import { describe, expect, it } from 'vitest'
import { healthReport, type HealthSource } from '../../relay/health'
import { openLinkStats } from './link/link-stats'

function source(over: Partial<HealthSource> = {}): HealthSource {
  return {
    instance: 'inst-1',
    driver: 'alpha',
    version: 't',
    startedAt: Date.now(),
    link: () => openLinkStats(),
    sessions: () => ({ connected: 3, disconnected: 2 }),
    draining: () => false,
    simUrl: null,
    ...over,
  }
}

describe('relay health report', () => {
  it('names a terminal 405 (client_outdated) with the upgrade the operator must make', () => {
    const report = healthReport(source({ problems: () => ({ client_outdated: 2, logged_out: 1 }) }))
    expect(report.sessions.by_problem).toEqual({ client_outdated: 2, logged_out: 1 })
    expect(report.operator_action).toEqual([
      { problem: 'client_outdated', sessions: 2, action: expect.stringMatching(/405.*upgrade @whiskeysockets\/baileys/) },
    ])
    expect(report.status).toBe('ok')
  })

  it('asks nothing of the operator when no session reports such a problem', () => {
    const report = healthReport(source({ problems: () => ({ logged_out: 1 }) }))
    expect(report.operator_action).toEqual([])
    expect(healthReport(source()).sessions.by_problem).toEqual({})
  })
})
