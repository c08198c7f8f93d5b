// The relay's count of refused frames: a warning each, an error and degraded health once they keep coming.
import pino from 'pino'
import { describe, expect, it } from 'vitest'
import { healthReport } from '../../../relay/health'
import { REJECTS_ALARM, REJECTS_WINDOW_MS, RejectLog } from '../../../relay/link/rejects'
import { openLinkStats } from './link-stats'

function logged() {
  const lines: Array<{ level: number; msg: string }> = []
  const log = pino({ level: 'info' }, { write: (s: string) => void lines.push(JSON.parse(s)) })
  return { log, lines }
}

const reject = (n: number) => ({ type: 'reject' as const, id: `f${n}`, sid: 'ses_1', fence: 2, reason: 'stale_fence' as const })

describe('RejectLog', () => {
  it('logs each refusal, and one error when REJECTS_ALARM of them fall within the window', () => {
    let now = 1_000_000
    const { log, lines } = logged()
    const rejects = new RejectLog(log, () => now)
    for (let i = 1; i < REJECTS_ALARM; i++) rejects.record(reject(i), 'session_write')
    expect(rejects.stats()).toMatchObject({ total: REJECTS_ALARM - 1, alarming: false, lastReason: 'stale_fence' })
    expect(lines.filter((l) => l.level === 50)).toEqual([])
    rejects.record(reject(REJECTS_ALARM), 'session_write')
    rejects.record(reject(REJECTS_ALARM + 1), 'session_write')
    expect(rejects.stats()).toMatchObject({ recent: REJECTS_ALARM + 1, alarming: true })
    expect(lines.filter((l) => l.level === 40)).toHaveLength(REJECTS_ALARM + 1)
    expect(lines.filter((l) => l.level === 50).map((l) => l.msg)).toEqual(['the edge keeps refusing this relay’s frames'])
    now += REJECTS_WINDOW_MS
    expect(rejects.stats()).toMatchObject({ total: REJECTS_ALARM + 1, recent: 0, alarming: false })
  })

  it('turns /healthz degraded (503) while the edge keeps refusing, with the count and the last reason', () => {
    const { log } = logged()
    const rejects = new RejectLog(log, () => 5_000)
    const source = (stats = rejects.stats()) => ({
      instance: 'rel_1',
      driver: 'sim',
      version: 'test',
      startedAt: 0,
      link: () => openLinkStats(stats),
      sessions: () => ({}),
      draining: () => false,
      simUrl: null,
    })
    expect(healthReport(source()).status).toBe('ok')
    for (let i = 0; i < REJECTS_ALARM; i++) rejects.record(reject(i), null)
    const report = healthReport(source())
    expect(report.status).toBe('degraded')
    expect(report.rejects).toEqual({ total: REJECTS_ALARM, recent: REJECTS_ALARM, last_reason: 'stale_fence', last_at: new Date(5_000).toISOString() })
  })
})
