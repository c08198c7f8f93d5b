/** The link figures of an open link that has carried nothing yet, for tests of the relay's health report. */
import type { RejectStats } from '../../../relay/link/rejects'
import type { LinkStats } from '../../../relay/link/socket'

export const NO_REJECTS: RejectStats = { total: 0, recent: 0, lastReason: null, lastAt: null, alarming: false }

export function openLinkStats(rejects: RejectStats = NO_REJECTS): LinkStats {
  return {
    state: 'open',
    since: 0,
    lastFrameInAt: null,
    lastFrameOutAt: null,
    lastPongAt: null,
    unacked: 0,
    reconnects: 0,
    rejects,
  }
}
