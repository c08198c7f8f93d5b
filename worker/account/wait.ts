/**
 * The long-poll wait of one account, served by the AccountDO's fetch handler (not RPC) because only a fetch sees
 * its caller go away: request.signal aborts and the slot is released at once. Its URL and answer: wait.shared.ts.
 * A wait is held only in the placement its cursor counts in, and not while the tenant moves: a move that begins
 * answers it (WAIT_MOVING_STATUS), and the caller tells its client to repeat the wait (with the same cursor).
 */
import { inboundAfter } from '../db/messages'
import { toWireMessage } from '../db/wire'
import type { AccountContext } from './context'
import type { AccountPlacement } from './storage'
import { WAIT_BATCH, WAIT_MOVING_STATUS, WaitParams, type WaitAnswer } from './wait.shared'

const moving = () => Response.json({ error: 'tenant_moving' }, { status: WAIT_MOVING_STATUS })

export async function serveWait(c: AccountContext, request: Request, placement: () => Promise<AccountPlacement>): Promise<Response> {
  const params = WaitParams.safeParse(Object.fromEntries(new URL(request.url).searchParams))
  if (!params.success) return Response.json({ error: 'bad wait parameters' }, { status: 400 })
  const { tenant, account, after, timeout_ms } = params.data
  const here = await placement()
  if (here.movingTo !== null || here.placement !== params.data.placement) return moving()
  const ticket = c.waits.enter()
  if (!ticket) return Response.json({ error: 'wait_concurrency' }, { status: 429 })
  try {
    const deadline = Date.now() + timeout_ms
    let rows = await inboundAfter(c.db, tenant, [account], after, WAIT_BATCH)
    while (rows.length === 0) {
      const outcome = await ticket.next(deadline, request.signal)
      if (outcome === 'closed') return moving()
      if (outcome !== 'woken') break
      rows = await inboundAfter(c.db, tenant, [account], after, WAIT_BATCH)
    }
    const answer: WaitAnswer = { messages: rows.map(toWireMessage), last_seq: rows.at(-1)?.message.seq ?? null }
    return Response.json(answer)
  } finally {
    c.waits.leave(ticket)
  }
}
