/**
 * The long-poll wait of one account, served by the AccountDO's fetch handler (not RPC) because only a fetch sees
 * its caller go away: request.signal aborts and the slot is released at once. Its URL and answer: wait.shared.ts.
 * A wait is held only in the placement its cursor counts in, and not while the tenant moves: a move that begins
 * answers it (WAIT_MOVING_STATUS), and the caller tells its client to repeat the wait (with the same cursor).
 */
import { inboundAfter, type MessageWithContact } from '../db/messages'
import { toWireMessage } from '../db/wire'
import type { AccountContext } from './context'
import type { AccountPlacement } from './storage'
import { WAIT_BATCH, WAIT_MOVING_STATUS, WaitParams, waitHeaders } from './wait.shared'
import { answerWait } from './wait-answer'
import type { CommittedInbound } from './waits'

const committedOf = (row: MessageWithContact): CommittedInbound => ({ seq: row.message.seq, message: toWireMessage(row) })

const moving = () => Response.json({ error: 'tenant_moving' }, { status: WAIT_MOVING_STATUS })

export async function serveWait(c: AccountContext, request: Request, placement: () => Promise<AccountPlacement>): Promise<Response> {
  const params = WaitParams.safeParse(Object.fromEntries(new URL(request.url).searchParams))
  if (!params.success) return Response.json({ error: 'bad wait parameters' }, { status: 400 })
  const { tenant, account, after, timeout_ms } = params.data
  const here = await placement()
  if (here.movingTo !== null || here.placement !== params.data.placement) return moving()
  const read = async (from: number) => (await inboundAfter(c.db, tenant, [account], from, WAIT_BATCH)).map(committedOf)
  const rows = await answerWait(c.waits, read, after, Date.now() + timeout_ms, request.signal)
  if (!rows) return Response.json({ error: 'wait_concurrency' }, { status: 429 })
  if (rows === 'closed') return moving()
  const messages = rows.map((r) => r.message)
  // Store media links are signed by the Worker for each answer (media/links-for.ts): it must parse those.
  const media = messages.some((m) => m.media !== null && 'id' in m.media)
  return new Response(JSON.stringify(messages), { headers: waitHeaders(messages.length, rows.at(-1)?.seq ?? null, media) })
}
