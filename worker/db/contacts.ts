/**
 * Contact queries. A contact belongs to one account; its id is derived from its address (lib/ids.ts), so the
 * insert statements here are idempotent and can ride in the same D1 batch as the message that needs them.
 */
import { and, eq, sql } from 'drizzle-orm'
import { z } from 'zod'
import { contacts, messages, type Channel } from '../../schema/d1'
import type { Db } from './client'
import { compiledVariants, placeholders } from './compiled'
import { inJsonList } from './json-list'

export type ContactRow = typeof contacts.$inferSelect

export async function getContact(db: Db, tenantId: string, id: string): Promise<ContactRow | undefined> {
  return db
    .select()
    .from(contacts)
    .where(and(eq(contacts.tenantId, tenantId), eq(contacts.id, id)))
    .get()
}

export type ContactSeed = {
  id: string
  tenantId: string
  accountId: string
  channel: Channel
  phone?: string | null
  externalId?: string | null
  socialId?: string | null
  peerId?: string | null
  username?: string | null
  name?: string | null
  firstName?: string | null
  lastName?: string | null
  email?: string | null
}

/** Creates the contact an outbound send addresses, if it does not exist yet. */
export function insertContactIfMissing(db: Db, seed: ContactSeed, now: number) {
  return db
    .insert(contacts)
    .values({ ...seed, createdAt: now, updatedAt: now })
    .onConflictDoNothing()
}

/** Words that opt a person out (and back in) when they are the whole inbound message, as carriers treat them. */
const OPT_OUT_WORDS = new Set(['STOP', 'STOPALL', 'UNSUBSCRIBE', 'CANCEL', 'END', 'QUIT'])
const OPT_IN_WORDS = new Set(['START', 'UNSTOP'])

export function optOutChange(text: string): boolean | undefined {
  const word = text.trim().toUpperCase()
  if (OPT_OUT_WORDS.has(word)) return true
  if (OPT_IN_WORDS.has(word)) return false
  return undefined
}

/** What an inbound message refreshes on its contact: details the channel gives replace older ones, gaps keep them. */
const INBOUND_REFRESH = {
  name: sql`coalesce(excluded.name, ${contacts.name})`,
  firstName: sql`coalesce(excluded.first_name, ${contacts.firstName})`,
  lastName: sql`coalesce(excluded.last_name, ${contacts.lastName})`,
  email: sql`coalesce(excluded.email, ${contacts.email})`,
  phone: sql`coalesce(excluded.phone, ${contacts.phone})`,
  peerId: sql`coalesce(excluded.peer_id, ${contacts.peerId})`,
  username: sql`coalesce(excluded.username, ${contacts.username})`,
}

type InboundContactValues = Required<ContactSeed> & { now: number; upstreamId: string | null }
type OptOutKey = { flag: 'optedOut' | 'doNotDisturb'; value: boolean } | null

/** The upsert of an inbound message's contact, per opt-out change (the flag it sets is part of the statement). */
const inboundContactUpsert = compiledVariants<OptOutKey, InboundContactValues>((db, key) => {
  const p = placeholders<InboundContactValues>()
  const flags = key ? { [key.flag]: key.value } : {}
  return db
    .insert(contacts)
    .values({
      id: p.id,
      tenantId: p.tenantId,
      accountId: p.accountId,
      channel: p.channel,
      phone: p.phone,
      externalId: p.externalId,
      socialId: p.socialId,
      peerId: p.peerId,
      username: p.username,
      name: p.name,
      firstName: p.firstName,
      lastName: p.lastName,
      email: p.email,
      ...flags,
      firstInboundAt: p.now,
      lastInboundAt: p.now,
      createdAt: p.now,
      updatedAt: p.now,
    })
    .onConflictDoUpdate({
      target: contacts.id,
      set: {
        ...INBOUND_REFRESH,
        ...flags,
        firstInboundAt: sql`coalesce(${contacts.firstInboundAt}, excluded.first_inbound_at)`,
        lastInboundAt: sql`${p.now}`,
        updatedAt: sql`${p.now}`,
      },
    })
    .returning({
      phone: contacts.phone,
      name: contacts.name,
      firstName: contacts.firstName,
      lastName: contacts.lastName,
      externalId: contacts.externalId,
      channel: contacts.channel,
      username: contacts.username,
      aiPaused: contacts.aiPaused,
      // The inbound message already stored under this upstream id, as it is before the message's own insert (the
      // next statement of the batch): that insert then does nothing, and this is the message the push duplicates.
      // Its id and contact as one JSON pair from one subquery: one index probe per message, not two, and one
      // subquery for SQLite to plan whenever local D1 prepares the statement (docs/performance-history.md).
      prior: sql`(select json_array(${messages.id}, ${messages.contactId}) from ${messages}
        where ${messages.tenantId} = ${p.tenantId} and ${messages.accountId} = ${p.accountId}
        and ${messages.direction} = 'inbound' and ${messages.upstreamId} = ${p.upstreamId})`.as('prior'),
    })
})

/** The `prior` pair of the inbound upsert: the stored message's id and its contact's id. */
const PriorInbound = z
  .string()
  .transform((text) => z.tuple([z.string(), z.string()]).parse(JSON.parse(text)))
  .transform(([id, contactId]) => ({ id, contactId }))

/**
 * What the inbound upsert answers, as a raw D1 row (SQL column names): the contact's wire columns as this message
 * leaves them, and the message already stored under the upstream id, if any.
 */
export const UpsertedInboundContact = z.object({
  phone: z.string().nullable(),
  name: z.string().nullable(),
  first_name: z.string().nullable(),
  last_name: z.string().nullable(),
  external_id: z.string().nullable(),
  channel: z.enum(contacts.channel.enumValues),
  username: z.string().nullable(),
  ai_paused: z.number(),
  prior: PriorInbound.nullable(),
})
export type UpsertedInboundContact = z.infer<typeof UpsertedInboundContact>

/**
 * Creates or refreshes the contact of an inbound message: names given by the channel replace older ones, the
 * first/last inbound times move, and a STOP/START message sets the opt-out flag (SMS) or do-not-disturb (others).
 * Answers one row (UpsertedInboundContact): the contact as it now is, and the message already stored under
 * `upstreamId` (so the batch needs no read-back to tell a duplicate). Compiled once (db/compiled.ts): it runs for
 * every inbound message.
 */
export function upsertInboundContact(db: Db, seed: ContactSeed, text: string, upstreamId: string | null, now: number): D1PreparedStatement {
  const optOut = optOutChange(text)
  const key: OptOutKey = optOut === undefined ? null : { flag: seed.channel === 'sms' ? 'optedOut' : 'doNotDisturb', value: optOut }
  return inboundContactUpsert(db, key).bind(db, {
    id: seed.id,
    tenantId: seed.tenantId,
    accountId: seed.accountId,
    channel: seed.channel,
    phone: seed.phone ?? null,
    externalId: seed.externalId ?? null,
    socialId: seed.socialId ?? null,
    peerId: seed.peerId ?? null,
    username: seed.username ?? null,
    name: seed.name ?? null,
    firstName: seed.firstName ?? null,
    lastName: seed.lastName ?? null,
    email: seed.email ?? null,
    now,
    upstreamId,
  })
}

/**
 * A contact imported from the linked phone (`import_contacts`): created if new, with the import's flags applied
 * either way (`ai_paused` from pause_ai_for_imported_contacts, `private` from mark_imported_contacts_as_private);
 * a name or number the gateway already knows is kept.
 */
export function upsertImportedContact(db: Db, seed: ContactSeed, flags: { aiPaused: boolean; private: boolean }, now: number) {
  return db
    .insert(contacts)
    .values({ ...seed, ...flags, createdAt: now, updatedAt: now })
    .onConflictDoUpdate({
      target: contacts.id,
      set: {
        name: sql`coalesce(${contacts.name}, excluded.name)`,
        phone: sql`coalesce(${contacts.phone}, excluded.phone)`,
        peerId: sql`coalesce(${contacts.peerId}, excluded.peer_id)`,
        aiPaused: flags.aiPaused,
        private: flags.private,
        updatedAt: now,
      },
    })
}

/** An account's contact with this phone number, whatever address its id was derived from (alpha keys people by LID when known). */
export async function findContactByPhone(db: Db, tenantId: string, accountId: string, phone: string): Promise<ContactRow | undefined> {
  return db
    .select()
    .from(contacts)
    .where(and(eq(contacts.tenantId, tenantId), eq(contacts.accountId, accountId), eq(contacts.phone, phone)))
    .get()
}

/** Phone → contact id of an account's contacts: of those numbers when `phones` is given, else of all that have one. */
export async function contactIdsByPhone(db: Db, tenantId: string, accountId: string, phones?: string[]): Promise<Map<string, string>> {
  const rows = await db
    .select({ id: contacts.id, phone: contacts.phone })
    .from(contacts)
    // The numbers travel as one parameter (db/json-list.ts): a relay's contact frame may carry thousands.
    .where(and(eq(contacts.tenantId, tenantId), eq(contacts.accountId, accountId), phones ? inJsonList(contacts.phone, phones) : undefined))
  return new Map(rows.flatMap((r) => (r.phone ? [[r.phone, r.id] as const] : [])))
}

export function displayName(c: Pick<ContactRow, 'name' | 'firstName' | 'lastName'>): string | null {
  if (c.name) return c.name
  const full = [c.firstName, c.lastName].filter(Boolean).join(' ')
  return full || null
}
