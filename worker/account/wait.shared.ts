/**
 * The long-poll wait between the Worker and an AccountDO (messaging/wait.ts asks, account/wait.ts holds it): the
 * request's URL and parameters, the answer's shape and its batch size. Shapes and pure functions only, so both
 * sides import it (docs/ARCHITECTURE.md, "Which isolate runs a module").
 */
import { z } from 'zod'
import { Message } from '../../schema/api/messages'

/** Messages one wait answers with at most. */
export const WAIT_BATCH = 50

export const WaitParams = z.object({
  tenant: z.string().min(1),
  account: z.string().min(1),
  after: z.coerce.number().int().min(0),
  /** The tenant's placement `after` counts in (db/cursor-maps.ts): the object answers only in that same placement. */
  placement: z.coerce.number().int().min(0).default(0),
  timeout_ms: z.coerce.number().int().min(0).max(60_000),
})

/** The object's status for a wait it cannot hold: the tenant is moving, or the caller and it disagree on where it lives. */
export const WAIT_MOVING_STATUS = 503

/** The object's answer, parsed with this shape where it is read (it crosses the Durable Object boundary as JSON). */
export const WaitAnswer = z.object({ messages: z.array(Message), last_seq: z.number().int().nullable() })
export type WaitAnswer = z.infer<typeof WaitAnswer>

/** The URL the Worker fetches the wait at (a fetch, not RPC: only a fetch sees its caller leave). */
export function waitUrl(tenantId: string, accountId: string, afterSeq: number, placement: number, timeoutMs: number): string {
  const q = new URLSearchParams({ tenant: tenantId, account: accountId, after: String(afterSeq), placement: String(placement), timeout_ms: String(timeoutMs) })
  return `https://account.internal/wait?${q}`
}
