/**
 * The one way a driver reports its session state: a state equal to the last one reported is dropped, so the
 * edge (and the account's `account.*` events) hears a change once however often a driver re-derives it (alpha's
 * connection updates and beta's probe both re-announce `connected` many times an hour).
 */
import type { Logger } from 'pino'
import type { SessionState } from './connector'

/** `report(state)` logs and forwards `state` to `sink` unless it equals the last state forwarded. */
export function makeStateFilter(driver: string, log: Logger, sink: (state: SessionState) => void): (state: SessionState) => void {
  let last = ''
  return (state) => {
    const key = JSON.stringify(state)
    if (key === last) return
    last = key
    log.info({ state: state.state, problem: 'problem' in state ? state.problem : undefined }, `${driver}: session state`)
    sink(state)
  }
}
