/**
 * GET /v1/messages/wait across one or several accounts. Each account's AccountDO holds the wait and pushes the
 * wakeup; with several accounts the first one with news ends all of them, and the answer is read from D1 across
 * all of them so the returned cursor never skips a message of another account. A wait counts in the tenant's
 * placement (db/cursor-maps.ts); while the tenant moves to another shard the objects answer at once, and the
 * client is told to repeat the wait (503 with Retry-After) with the cursor it has, which stays good.
 */
import { accountStub } from '../lib/objects'
import { WAIT_BATCH, WAIT_MOVING_STATUS, waitHead, WaitMessages, waitUrl, type WaitHead } from '../account/wait.shared'
import type { AccountRow } from '../db/accounts'
import type { Db } from '../db/client'
import { inboundAfter } from '../db/messages'
import { ApiError, tenantMovingError } from '../errors'
import { firstNews } from './wait-across'
import { toWireMessage, type WireMessage } from '../db/wire'

/**
 * The messages of an answer: objects, or (one account, no store media to sign) the object's JSON array as it came,
 * which the route puts into its answer as it is.
 */
export type WaitResult = { messages: WireMessage[]; lastSeq: number } | { messagesJson: string; lastSeq: number }

const waitConcurrency = () => new ApiError(429, 'wait_concurrency', 'At most 2 waits may be open per account; close one first')

/** Times a wait is handed to the account's object again after the object was reset under it. */
export const WAIT_RESETS_MAX = 2

/** The runtime marks a call whose Durable Object was reset (a deploy, a restart) or could not be reached. */
const objectReset = (err: unknown) => err instanceof Error && (Reflect.get(err, 'durableObjectReset') === true || Reflect.get(err, 'retryable') === true)

/**
 * One account's wait. If the object is reset while it holds the wait, the wait goes to the new instance for the time
 * left (a wait only reads, so repeating it is safe, and the new instance registers it before reading D1, so a
 * message committed meanwhile is found): the client gets its answer, not an error.
 */
/** Where a wait counts: the tenant and its placement (the `placement` of its row). */
export type WaitPlace = { tenantId: string; placement: number }

async function waitOne(
  env: Env,
  at: WaitPlace,
  accountId: string,
  afterSeq: number,
  timeoutMs: number,
  signal: AbortSignal
): Promise<WaitHead & { body: string }> {
  const deadline = Date.now() + timeoutMs
  for (let resets = 0; ; resets++) {
    let res: Response
    try {
      const left = Math.max(0, deadline - Date.now())
      res = await accountStub(env, at.tenantId, accountId).fetch(waitUrl(at.tenantId, accountId, afterSeq, at.placement, left), { signal })
    } catch (err) {
      if (resets >= WAIT_RESETS_MAX || signal.aborted || !objectReset(err)) throw err
      continue
    }
    if (res.status === 429) throw waitConcurrency()
    if (res.status === WAIT_MOVING_STATUS) throw tenantMovingError()
    if (!res.ok) throw new Error(`account wait failed with HTTP ${res.status}`)
    return { ...waitHead(res.headers), body: await res.text() }
  }
}

/** Holds the request until `ms` pass or the client leaves (nothing can arrive for a tenant without accounts). */
function idle(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms)
    signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true })
  })
}

export async function waitForInbound(
  env: Env,
  db: Db,
  at: WaitPlace,
  targets: AccountRow[],
  afterSeq: number,
  timeoutMs: number,
  clientSignal: AbortSignal
): Promise<WaitResult> {
  const [only] = targets
  if (targets.length === 0 || !only) {
    await idle(timeoutMs, clientSignal)
    return { messages: [], lastSeq: afterSeq }
  }
  if (targets.length === 1) {
    const answer = await waitOne(env, at, only.id, afterSeq, timeoutMs, clientSignal)
    const lastSeq = answer.lastSeq ?? afterSeq
    return answer.media ? { messages: WaitMessages.parse(JSON.parse(answer.body)), lastSeq } : { messagesJson: answer.body, lastSeq }
  }

  await firstNews(
    targets.map((a) => a.id),
    async (id, signal) => ({ news: (await waitOne(env, at, id, afterSeq, timeoutMs, signal)).count > 0 }),
    clientSignal
  )
  const rows = await inboundAfter(
    db,
    at.tenantId,
    targets.map((a) => a.id),
    afterSeq,
    WAIT_BATCH
  )
  return { messages: rows.map(toWireMessage), lastSeq: rows.at(-1)?.message.seq ?? afterSeq }
}
