/**
 * Committing events from outside an AccountDO (routes, the admin review): one D1 batch, then each emitting
 * account's Durable Object is told to fan out. If that notice is lost, the sweeper (sweeper.ts) finds the events
 * within a minute, so a committed event is never stranded. Inside the AccountDO use AccountContext.commit.
 */
import type { BatchItem, BatchResponse } from 'drizzle-orm/batch'
import { accountStub } from '../lib/objects'
import type { Db } from '../db/client'
import { eventsWritten, type EventOwner } from '../db/events'

export async function commitEvents<U extends BatchItem<'sqlite'>, T extends Readonly<[U, ...U[]]>>(env: Env, db: Db, statements: T): Promise<BatchResponse<T>> {
  const results = await db.batch(statements)
  // Only events written undispatched wait for a fan-out; one nobody subscribes to needs no notice.
  await notifyOwners(
    env,
    eventsWritten(statements, results).filter((e) => e.dispatchedAt === null)
  )
  return results
}

/** Asks each account's Durable Object to fan out (and run due deliveries); never fails the caller. */
export async function notifyOwners(env: Env, owners: Array<EventOwner | undefined>): Promise<void> {
  const unique = new Map<string, EventOwner>()
  for (const o of owners) if (o) unique.set(`${o.tenantId}/${o.accountId}`, o)
  await Promise.all(
    [...unique.values()].map((o) =>
      accountStub(env, o.tenantId, o.accountId)
        .eventsAdded(o)
        .catch((err: unknown) =>
          console.error(JSON.stringify({ msg: 'webhook fan-out notice failed; the sweeper will pick it up', owner: o, error: String(err) }))
        )
    )
  )
}
