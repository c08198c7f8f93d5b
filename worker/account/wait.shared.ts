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

/**
 * The object's answer: its body is the messages' JSON array, already in wire form, and its facts ride in headers, so
 * the Worker can pass a body that needs no media link signed straight into its own answer, never parsing and
 * re-serialising it. A body that is parsed is parsed with WaitMessages.
 */
export const WAIT_HEADERS = { count: 'x-wait-count', lastSeq: 'x-wait-last-seq', media: 'x-wait-media' } as const

const Count = z.string().regex(/^\d+$/).transform(Number)
const WaitHead = z.object({ count: Count, lastSeq: Count.nullable(), media: z.enum(['0', '1']).transform((v) => v === '1') })
export type WaitHead = z.infer<typeof WaitHead>

export const WaitMessages = z.array(Message)

export function waitHeaders(count: number, lastSeq: number | null, media: boolean): Record<string, string> {
  return {
    'Content-Type': 'application/json',
    [WAIT_HEADERS.count]: String(count),
    ...(lastSeq === null ? {} : { [WAIT_HEADERS.lastSeq]: String(lastSeq) }),
    [WAIT_HEADERS.media]: media ? '1' : '0',
  }
}

export function waitHead(headers: Headers): WaitHead {
  return WaitHead.parse({ count: headers.get(WAIT_HEADERS.count), lastSeq: headers.get(WAIT_HEADERS.lastSeq), media: headers.get(WAIT_HEADERS.media) })
}

/** The URL the Worker fetches the wait at (a fetch, not RPC: only a fetch sees its caller leave). */
export function waitUrl(tenantId: string, accountId: string, afterSeq: number, placement: number, timeoutMs: number): string {
  const q = new URLSearchParams({ tenant: tenantId, account: accountId, after: String(afterSeq), placement: String(placement), timeout_ms: String(timeoutMs) })
  return `https://account.internal/wait?${q}`
}
