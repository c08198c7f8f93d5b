/**
 * The long-poll wait of one account, served by the AccountDO's fetch handler (not RPC) because only a fetch sees
 * its caller go away: request.signal aborts and the slot is released at once. Its URL and answer: wait.shared.ts.
 */
import { inboundAfter } from '../db/messages'
import { toWireMessage } from '../db/wire'
import type { AccountContext } from './context'
import { WAIT_BATCH, WaitParams, type WaitAnswer } from './wait.shared'

export async function serveWait(c: AccountContext, request: Request): Promise<Response> {
  const params = WaitParams.safeParse(Object.fromEntries(new URL(request.url).searchParams))
  if (!params.success) return Response.json({ error: 'bad wait parameters' }, { status: 400 })
  const { tenant, account, after, timeout_ms } = params.data
  const ticket = c.waits.enter()
  if (!ticket) return Response.json({ error: 'wait_concurrency' }, { status: 429 })
  try {
    const deadline = Date.now() + timeout_ms
    let rows = await inboundAfter(c.db, tenant, [account], after, WAIT_BATCH)
    while (rows.length === 0) {
      if ((await ticket.next(deadline, request.signal)) !== 'woken') break
      rows = await inboundAfter(c.db, tenant, [account], after, WAIT_BATCH)
    }
    const answer: WaitAnswer = { messages: rows.map(toWireMessage), last_seq: rows.at(-1)?.message.seq ?? null }
    return Response.json(answer)
  } finally {
    c.waits.leave(ticket)
  }
}
