/**
 * Message queries. Lists and waits page by `seq` (see schema/d1.ts for why that is gap-free); every read joins
 * the contact so rows convert straight into the wire shape.
 */
import { and, asc, desc, eq, getTableColumns, gt, inArray, isNull, lt, lte, max, or, sql, type SQL } from 'drizzle-orm'
import { z } from 'zod'
import { contacts, messages, type MediaKind, type MessageStatus } from '../../schema/d1'
import { alias } from 'drizzle-orm/sqlite-core'
import type { Db } from './client'
import { accountFigures } from './account-stats'
import { compiledVariants, placeholders, rawRowReader } from './compiled'
import { constantRow } from './constant-row'
import { inJsonList } from './json-list'
import type { ContactRow } from './contacts'

export type MessageRow = typeof messages.$inferSelect
export type MessageWithContact = { message: MessageRow; contact: ContactRow | null }

function selectWithContact(db: Db) {
  return db.select({ message: messages, contact: contacts }).from(messages).leftJoin(contacts, eq(contacts.id, messages.contactId))
}

export async function getMessage(db: Db, tenantId: string, id: string): Promise<MessageWithContact | undefined> {
  return selectWithContact(db)
    .where(and(eq(messages.tenantId, tenantId), eq(messages.id, id)))
    .get()
}

export type ListFilter = {
  tenantId: string
  accountId?: string
  /** Only these accounts (a key limited to some accounts). */
  accountIds?: string[]
  direction?: 'inbound' | 'outbound'
  beforeSeq?: number
  limit: number
}

/**
 * Newest first; fetches one extra row to know whether another page exists. A key limited to some accounts reads a
 * page per account and merges them: a walk of the tenant's messages filtered by account would read every message of
 * the others back to the last one the key may see (issue 22 §3: no request reads history it does not answer).
 */
export async function listMessages(db: Db, f: ListFilter): Promise<{ rows: MessageWithContact[]; more: boolean }> {
  const page = (accountId: string | undefined) => {
    const where: SQL[] = [eq(messages.tenantId, f.tenantId)]
    if (accountId !== undefined) where.push(eq(messages.accountId, accountId))
    if (f.direction) where.push(eq(messages.direction, f.direction))
    if (f.beforeSeq !== undefined) where.push(lt(messages.seq, f.beforeSeq))
    return selectWithContact(db)
      .where(and(...where))
      .orderBy(desc(messages.seq))
      .limit(f.limit + 1)
  }
  const accountIds = f.accountId !== undefined ? (f.accountIds && !f.accountIds.includes(f.accountId) ? [] : [f.accountId]) : f.accountIds
  let rows: MessageWithContact[]
  if (accountIds === undefined) rows = await page(undefined)
  else {
    const [first, ...rest] = accountIds.map(page)
    rows = first ? (await db.batch([first, ...rest])).flat().sort((a, b) => b.message.seq - a.message.seq) : []
  }
  return { rows: rows.slice(0, f.limit), more: rows.length > f.limit }
}

type InboundAfterValues = { tenantId: string; afterSeq: number; limit: number; [account: `account${number}`]: string }

/** The wait's read, one statement per number of accounts (a tenant has a few: the plan caps them). */
const inboundAfterStatement = compiledVariants<number, InboundAfterValues>((db, accountCount) => {
  const p = placeholders<InboundAfterValues>()
  const accountIds = Array.from({ length: accountCount }, (_, i) => sql.placeholder(`account${i}`))
  return selectWithContact(db)
    .where(and(eq(messages.tenantId, p.tenantId), inArray(messages.accountId, accountIds), eq(messages.direction, 'inbound'), gt(messages.seq, p.afterSeq)))
    .orderBy(asc(messages.seq))
    .limit(p.limit)
})

const readMessage = rawRowReader(messages)
const readContact = rawRowReader(contacts)
const MESSAGE_COLUMNS = Object.keys(getTableColumns(messages)).length
/** A stored contact's id is never null, so a null one is a message without a contact (as Drizzle's left join decides). */
const CONTACT_ID_AT = MESSAGE_COLUMNS + Object.keys(getTableColumns(contacts)).indexOf('id')

/** What `selectWithContact` answers, from a raw row of it: the message's columns, then the contact's. */
function withContactOf(row: readonly unknown[]): MessageWithContact {
  return { message: readMessage(row, 0), contact: row[CONTACT_ID_AT] === null ? null : readContact(row, MESSAGE_COLUMNS) }
}

/**
 * Inbound messages after `afterSeq`, oldest first: what a long-poll wait hands out. Compiled once per isolate
 * (db/compiled.ts): the AccountDO reads it on every wait that finds messages already committed, and building the
 * query with Drizzle per call cost more CPU than D1 spent running it.
 */
export async function inboundAfter(db: Db, tenantId: string, accountIds: string[], afterSeq: number, limit: number): Promise<MessageWithContact[]> {
  if (accountIds.length === 0) return []
  const values: InboundAfterValues = { tenantId, afterSeq, limit }
  for (const [i, id] of accountIds.entries()) values[`account${i}`] = id
  const rows = await inboundAfterStatement(db, accountIds.length).bind(db, values).raw()
  return rows.map(withContactOf)
}

/** The tenant's newest seq (0 when it has none): where a wait without a cursor starts. */
export async function latestSeq(db: Db, tenantId: string): Promise<number> {
  const row = await db
    .select({ seq: max(messages.seq) })
    .from(messages)
    .where(eq(messages.tenantId, tenantId))
    .get()
  return row?.seq ?? 0
}

/**
 * The tenant's `window` oldest messages by seq, with their contacts (the retention sweep's step). Reads at most
 * `window` rows whatever the history: the caller picks the old ones out of them.
 */
export async function oldestMessages(db: Db, tenantId: string, window: number): Promise<MessageWithContact[]> {
  const oldest = db.select({ seq: messages.seq }).from(messages).where(eq(messages.tenantId, tenantId)).orderBy(asc(messages.seq)).limit(window)
  return selectWithContact(db).where(inArray(messages.seq, oldest)).orderBy(asc(messages.seq))
}

export function insertMessage(db: Db, row: typeof messages.$inferInsert) {
  return db.insert(messages).values(row)
}

type InboundRowValues = {
  id: string
  tenantId: string
  accountId: string
  contactId: string
  text: string
  mediaUrl: string | null
  mediaContentType: string | null
  mediaId: string | null
  mediaKind: MediaKind | null
  mediaSize: number | null
  mediaFileName: string | null
  mediaError: string | null
  mediaStatus: MessageRow['mediaStatus']
  upstreamId: string | null
  /** The upstream id of the message this one quotes (issue 25); stored as our id when we have that message. */
  replyTo: string | null
  now: number
}

/**
 * Two variants, by whether the message quotes one: a reply's statement holds the lookup of what it quotes, the
 * others go without it, so SQLite does not plan it whenever local D1 prepares the statement for a plain message.
 */
const inboundInsert = compiledVariants<boolean, InboundRowValues>((db, isReply) => {
  const p = placeholders<InboundRowValues>()
  const row = {
    id: p.id,
    tenantId: p.tenantId,
    accountId: p.accountId,
    contactId: p.contactId,
    direction: 'inbound' as const,
    text: p.text,
    mediaUrl: p.mediaUrl,
    mediaContentType: p.mediaContentType,
    mediaId: p.mediaId,
    mediaKind: p.mediaKind,
    mediaSize: p.mediaSize,
    mediaFileName: p.mediaFileName,
    mediaError: p.mediaError,
    mediaStatus: p.mediaStatus,
    status: 'received' as const,
    upstreamId: p.upstreamId,
    createdAt: p.now,
    updatedAt: p.now,
  }
  // The quoted message by our id when it is stored (either direction), else the network's id for it.
  const quoted = alias(messages, 'quoted')
  const ours = db
    .select({ id: quoted.id })
    .from(quoted)
    .where(
      and(
        eq(quoted.tenantId, p.tenantId),
        eq(quoted.accountId, p.accountId),
        inArray(quoted.direction, ['inbound', 'outbound']),
        eq(quoted.upstreamId, p.replyTo)
      )
    )
    .limit(1)
  const replyTo = isReply ? sql`coalesce((${ours}), ${p.replyTo})` : sql`null`
  // RETURNING gives a row only when it inserted: none for a duplicate upstream id or a private contact. SQLite needs
  // the WHERE in an INSERT … SELECT that has an ON CONFLICT clause (the parser's join ambiguity); it has one.
  return db
    .insert(messages)
    .select(
      db
        .select(constantRow(messages, row, { replyTo }))
        .from(contacts)
        .where(and(eq(contacts.id, p.contactId), eq(contacts.private, false)))
    )
    .onConflictDoNothing()
    .returning({ id: messages.id, seq: messages.seq, replyTo: messages.replyTo })
})

/**
 * What `insertInboundUnlessPrivate` answers when it inserted, as a raw D1 row: the message's id, its seq, and what it
 * quotes as stored (our id when we have that message, else the network's: not what the upstream sent).
 */
export const InsertedInbound = z.object({ id: z.string(), seq: z.number().int(), reply_to: z.string().nullable() })

/**
 * An inbound insert that does nothing when this upstream id was already stored (re-pushed or re-sent by a relay)
 * or when the contact is private (spec 4.3: nothing about private contacts is stored). The contact row must exist
 * by then (upserted earlier in the same batch). `RETURNING` answers the inserted row's id, seq and reply_to (InsertedInbound),
 * and no row when it inserted nothing. Compiled once per variant: it runs for every inbound message.
 */
export function insertInboundUnlessPrivate(db: Db, row: Omit<InboundRowValues, 'now'>, now: number): D1PreparedStatement {
  return inboundInsert(db, row.replyTo !== null).bind(db, { ...row, now })
}

export async function findByUpstreamId(
  db: Db,
  tenantId: string,
  accountId: string,
  direction: 'inbound' | 'outbound',
  upstreamId: string
): Promise<MessageWithContact | undefined> {
  return selectWithContact(db)
    .where(and(eq(messages.tenantId, tenantId), eq(messages.accountId, accountId), eq(messages.direction, direction), eq(messages.upstreamId, upstreamId)))
    .get()
}

/** Messages of one direction the network knows by these upstream ids (a burst of receipts reads them in one query). */
export async function findByUpstreamIds(
  db: Db,
  tenantId: string,
  accountId: string,
  direction: 'inbound' | 'outbound',
  upstreamIds: readonly string[]
): Promise<MessageWithContact[]> {
  if (upstreamIds.length === 0) return []
  return selectWithContact(db).where(
    and(eq(messages.tenantId, tenantId), eq(messages.accountId, accountId), eq(messages.direction, direction), inJsonList(messages.upstreamId, upstreamIds))
  )
}

/** The message of an account the network knows by `upstreamId`, either direction (a reaction or a quote names it so). */
export async function findByUpstreamIdAnyDirection(db: Db, tenantId: string, accountId: string, upstreamId: string): Promise<MessageWithContact | undefined> {
  return selectWithContact(db)
    .where(
      and(
        eq(messages.tenantId, tenantId),
        eq(messages.accountId, accountId),
        inArray(messages.direction, ['inbound', 'outbound']),
        eq(messages.upstreamId, upstreamId)
      )
    )
    .get()
}

/** The messages `ids` quote, by id, with what a channel needs to quote them (issue 25): their upstream id, direction and text. */
export async function quotedMessages(
  db: Db,
  tenantId: string,
  ids: string[]
): Promise<Map<string, Pick<MessageRow, 'id' | 'upstreamId' | 'direction' | 'text'>>> {
  if (ids.length === 0) return new Map()
  const rows = await db
    .select({ id: messages.id, upstreamId: messages.upstreamId, direction: messages.direction, text: messages.text })
    .from(messages)
    .where(and(eq(messages.tenantId, tenantId), inJsonList(messages.id, ids)))
  return new Map(rows.map((r) => [r.id, r]))
}

/** Queued outbound messages of one account whose last delivery attempt is older than `staleBefore` (or never made). */
export async function queuedMessages(db: Db, tenantId: string, accountId: string, staleBefore: number): Promise<MessageWithContact[]> {
  return selectWithContact(db)
    .where(
      and(
        eq(messages.tenantId, tenantId),
        eq(messages.accountId, accountId),
        eq(messages.status, 'queued'),
        or(isNull(messages.lastAttemptAt), lte(messages.lastAttemptAt, staleBefore))
      )
    )
    .orderBy(asc(messages.seq))
    .limit(100)
}

/** Whether any message of the account still waits to go out (the delivery sweep re-arms while one does). */
export async function hasQueued(db: Db, tenantId: string, accountId: string): Promise<boolean> {
  const rows = await db
    .select({ seq: messages.seq })
    .from(messages)
    .where(and(eq(messages.tenantId, tenantId), eq(messages.accountId, accountId), eq(messages.status, 'queued')))
    .limit(1)
  return rows.length > 0
}

/** Records the start of a delivery attempt; answers undefined when the message is no longer queued. */
export async function markAttempt(db: Db, id: string, now: number): Promise<MessageRow | undefined> {
  const [row] = await db
    .update(messages)
    .set({ lastAttemptAt: now, updatedAt: now, attempts: sql`${messages.attempts} + 1` })
    .where(and(eq(messages.id, id), eq(messages.status, 'queued')))
    .returning()
  return row
}

/**
 * A delivery attempt the channel asked to repeat later (`retry`): it does not count as an interrupted attempt, the
 * sweep takes the message over once `staleAt` plus the lease has passed, and the reason is kept for the final error.
 */
export async function deferAttempt(db: Db, id: string, staleAt: number, error: string): Promise<void> {
  await db
    .update(messages)
    .set({ lastAttemptAt: staleAt, attempts: sql`max(${messages.attempts} - 1, 0)`, errorMessage: error })
    .where(and(eq(messages.id, id), eq(messages.status, 'queued')))
}

export type StatusChange = { status: MessageStatus; errorCode?: number | null; errorMessage?: string | null; upstreamId?: string | null }

/** A statement moving the messages matching `where` to a new status (callers pass the precondition, e.g. still queued). */
export function updateMessageStatus(db: Db, change: StatusChange, now: number, where: SQL) {
  const values: Partial<MessageRow> = { status: change.status, updatedAt: now }
  if (change.errorCode !== undefined) values.errorCode = change.errorCode
  if (change.errorMessage !== undefined) values.errorMessage = change.errorMessage
  if (change.upstreamId !== undefined) values.upstreamId = change.upstreamId
  return db.update(messages).set(values).where(where)
}

/** Messages stored for one account, both directions (the `message_count` of the alpha status answer): one row read. */
export async function countAccountMessages(db: Db, tenantId: string, accountId: string): Promise<number> {
  return (await accountFigures(db, tenantId, accountId)).messageCount
}

/**
 * Upstream ids of a person's outbound messages sent up to `before` and not yet read: what a Messenger read
 * watermark ("everything before this time was read") covers.
 */
export async function unreadOutboundBefore(db: Db, tenantId: string, accountId: string, contactId: string, before: number): Promise<string[]> {
  const rows = await db
    .select({ upstreamId: messages.upstreamId })
    .from(messages)
    .where(
      and(
        eq(messages.tenantId, tenantId),
        eq(messages.accountId, accountId),
        eq(messages.contactId, contactId),
        eq(messages.direction, 'outbound'),
        inArray(messages.status, ['sent', 'delivered']),
        lte(messages.createdAt, before)
      )
    )
  return rows.flatMap((r) => (r.upstreamId ? [r.upstreamId] : []))
}
