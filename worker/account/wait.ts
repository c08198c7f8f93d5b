/**
 * The long-poll wait of one account, served by the AccountDO's fetch handler (not RPC) because only a fetch sees
 * its caller go away: request.signal aborts and the slot is released at once.
 */
import { z } from 'zod'
import { Message } from '../../schema/api/messages'
import { inboundAfter } from '../db/messages'
import { toWireMessage } from '../db/wire'
import type { AccountContext } from './context'

export const WAIT_BATCH = 50

const WaitParams = z.object({
  tenant: z.string().min(1),
  account: z.string().min(1),
  after: z.coerce.number().int().min(0),
  timeout_ms: z.coerce.number().int().min(0).max(60_000),
})

/** The object's answer, parsed with this shape where it is read (it crosses the Durable Object boundary as JSON). */
export const WaitAnswer = z.object({ messages: z.array(Message), last_seq: z.number().int().nullable() })
export type WaitAnswer = z.infer<typeof WaitAnswer>

export function waitUrl(tenantId: string, accountId: string, afterSeq: number, timeoutMs: number): string {
  const q = new URLSearchParams({ tenant: tenantId, account: accountId, after: String(afterSeq), timeout_ms: String(timeoutMs) })
  return `https://account.internal/wait?${q}`
}

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
