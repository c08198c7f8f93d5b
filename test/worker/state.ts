/**
 * Direct access to the stored state for workerd tests: accounts that REST cannot create yet (alpha, sms, beta, a
 * second account past the plan cap), the event outbox, contact flags, the DOs' open waits, and an injected clock.
 */
import { runInDurableObject } from 'cloudflare:test'
import { env } from 'cloudflare:workers'
import { and, asc, eq } from 'drizzle-orm'
import { vi } from 'vitest'
import { contacts, events, messages, type AccountStatus, type Channel } from '../../schema/d1'
import type { EventPayload } from '../../schema/events'
import { accountStub } from '../../worker/lib/objects'
import type { AccountContext } from '../../worker/account/context'
import type { AccountRef } from '../../worker/account/storage'
import { insertAccountWithinCap } from '../../worker/db/accounts'
import { database } from '../../worker/db/client'
import type { ContactRow } from '../../worker/db/contacts'
import { contactIdFor } from '../../worker/lib/ids'

export const db = database(env.DB)

/** Inserts an account directly (no plan cap), as a channel connect would; alpha accounts also start their ramp. */
export async function addAccount(tenantId: string, a: { id: string; channel: Channel; status?: AccountStatus; identifier?: string }): Promise<AccountRef> {
  const status = a.status ?? 'connected'
  const now = Date.now()
  const ok = await insertAccountWithinCap(
    db,
    { tenantId, id: a.id, channel: a.channel, identifier: a.identifier ?? a.id, status, connectedAt: status === 'connected' ? now : null, now },
    1000
  )
  if (!ok) throw new Error(`account ${a.id} was not inserted`)
  const ref: AccountRef = { tenantId, accountId: a.id, channel: a.channel }
  if (status === 'connected') await accountStub(env, tenantId, a.id).connectionChanged(ref, true)
  return ref
}

/** Pushes an inbound message straight into an account's DO (the path a relay or channel route takes). */
export async function ingestVia(ref: AccountRef, from: { phone?: string; externalId?: string }, text: string) {
  const address = from.phone !== undefined ? { kind: 'phone' as const, value: from.phone } : { kind: 'external' as const, value: from.externalId ?? '' }
  const id = await contactIdFor(ref.tenantId, ref.accountId, address)
  return accountStub(env, ref.tenantId, ref.accountId).ingest({
    ref,
    contact: { id, tenantId: ref.tenantId, accountId: ref.accountId, channel: ref.channel, phone: from.phone ?? null, externalId: from.externalId ?? null },
    text,
    mediaUrl: null,
    mediaContentType: null,
    upstreamId: null,
  })
}

export type StoredEvent = { type: string; accountId: string; payload: EventPayload }

/** The tenant's outbox rows, oldest first, with parsed payloads (optionally one type only). */
export async function eventsOf(tenantId: string, type?: string): Promise<StoredEvent[]> {
  const where = type ? and(eq(events.tenantId, tenantId), eq(events.type, type)) : eq(events.tenantId, tenantId)
  const rows = await db.select().from(events).where(where).orderBy(asc(events.createdAt), asc(events.id))
  return rows.map((r) => ({ type: r.type, accountId: r.accountId, payload: JSON.parse(r.payload) as EventPayload }))
}

export async function contactRow(tenantId: string, id: string): Promise<ContactRow | undefined> {
  return db
    .select()
    .from(contacts)
    .where(and(eq(contacts.tenantId, tenantId), eq(contacts.id, id)))
    .get()
}

export async function setContactFlags(id: string, flags: Partial<Pick<ContactRow, 'private' | 'doNotDisturb' | 'optedOut'>>) {
  await db.update(contacts).set(flags).where(eq(contacts.id, id))
}

export async function messageRow(id: string) {
  return db.select().from(messages).where(eq(messages.id, id)).get()
}

/** How many long-poll waits the account's DO holds open right now. */
export async function openWaits(tenantId: string, accountId: string): Promise<number> {
  return runInDurableObject(accountStub(env, tenantId, accountId), (instance) => {
    const room: unknown = Reflect.get(instance, 'waits')
    if (typeof room !== 'object' || room === null || !('open' in room) || typeof room.open !== 'number') throw new Error('AccountDO.waits changed shape')
    return room.open
  })
}

/** Resolves once the account's DO holds `n` open waits (polls its in-memory room; a wait registers asynchronously). */
export async function untilOpenWaits(tenantId: string, accountId: string, n: number): Promise<void> {
  await vi.waitFor(
    async () => {
      if ((await openWaits(tenantId, accountId)) !== n) throw new Error(`waiting for ${n} open waits`)
    },
    { timeout: 5000, interval: 5 }
  )
}

/** Freezes Date (also inside the Durable Objects, which share the test isolate) at `at`; timers stay real. */
export function setClock(at: string | number): void {
  vi.useFakeTimers({ toFake: ['Date'] })
  vi.setSystemTime(new Date(at))
}

/**
 * Freezes Date a whole second a year ahead and returns that instant: the real clock never gets there, so no Durable
 * Object alarm fires on its own and each step is driven by the test.
 */
export function freezeClockYearAhead(): number {
  const at = Math.floor((Date.now() + 365 * DAY_MS) / 1000) * 1000
  setClock(at)
  return at
}

export const HOUR_MS = 3_600_000
export const DAY_MS = 86_400_000

/** The object's context, once the object knows its tenant's shard (its RPC methods learn it first; these tests call the rules directly). */
export async function accountContextOf(instance: unknown): Promise<AccountContext> {
  const placed: unknown = Reflect.get(instance as object, 'placed')
  if (typeof placed !== 'function') throw new Error('AccountDO.placed changed shape')
  await placed.call(instance)
  const c: unknown = Reflect.get(instance as object, 'context')
  if (typeof c !== 'object' || c === null || !('commit' in c) || !('store' in c)) throw new Error('AccountDO.context changed shape')
  return c as AccountContext
}
