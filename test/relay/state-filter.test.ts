// A driver's state reports reach the edge once per change, however often the driver re-derives them.
import pino from 'pino'
import { describe, expect, it } from 'vitest'
import type { SessionState } from '../../relay/connector'
import { makeStateFilter } from '../../relay/state-filter'

describe('makeStateFilter', () => {
  it('forwards a state once until it changes, including a change of problem or detail alone', () => {
    const seen: SessionState[] = []
    const report = makeStateFilter('alpha', pino({ level: 'silent' }), (s) => seen.push(s))
    const connected: SessionState = { state: 'connected', identifier: '+15550001111', upstreamUserId: 'u1' }
    report(connected)
    report({ ...connected })
    report({ state: 'connecting' })
    report({ state: 'connecting' })
    report(connected)
    report({ ...connected, upstreamUserId: 'u2' })
    expect(seen.map((s) => s.state)).toEqual(['connected', 'connecting', 'connected', 'connected'])
  })
})
