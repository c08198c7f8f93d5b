/**
 * Message queries (worker/db/messages.ts) against real D1. `inboundAfter`, the long-poll wait's read, runs a statement
 * compiled once per isolate and decodes its raw rows by hand (db/compiled.ts): it must answer exactly what Drizzle's
 * own select answers, for one account and several, at every cursor and limit.
 */
import { env } from 'cloudflare:workers'
import { and, asc, eq, gt, inArray } from 'drizzle-orm'
import { describe, expect, it } from 'vitest'
import { contacts, messages } from '../../../schema/d1'
import { database } from '../../../worker/db/client'
import { inboundAfter } from '../../../worker/db/messages'

const db = database(env.DB)

/** The wait's read as Drizzle builds it per call: the answer the compiled statement must match object for object. */
function reference(tenantId: string, accountIds: string[], afterSeq: number, limit: number) {
  return db
    .select({ message: messages, contact: contacts })
    .from(messages)
    .leftJoin(contacts, eq(contacts.id, messages.contactId))
    .where(and(eq(messages.tenantId, tenantId), inArray(messages.accountId, accountIds), eq(messages.direction, 'inbound'), gt(messages.seq, afterSeq)))
    .orderBy(asc(messages.seq))
    .limit(limit)
}

type NewMessage = typeof messages.$inferInsert

/**
 * A tenant's history across two accounts: inbound messages from a contact with every field set (booleans flipped
 * from their defaults), from a bare contact, and from a contact whose row is gone (the join answers none); media,
 * a quote, reactions, an error; outbound messages the read must skip; and another tenant's message under the same
 * account id.
 */
async function storeHistory() {
  const tenantId = `t-${crypto.randomUUID()}`
  const [a, b] = ['acct-a', 'acct-b']
  const full = `c-full-${crypto.randomUUID()}`
  const bare = `c-bare-${crypto.randomUUID()}`
  await db.insert(contacts).values([
    {
      id: full,
      tenantId,
      accountId: a,
      channel: 'alpha_web',
      phone: '+15550100',
      externalId: 'ext-1',
      socialId: 'soc-1',
      peerId: '123@lid',
      username: 'ann',
      name: 'Ann',
      firstName: 'Ann',
      lastName: 'Lee',
      email: 'ann@example.com',
      doNotDisturb: true,
      optedOut: true,
      aiPaused: true,
      firstInboundAt: 10,
      lastInboundAt: 20,
      createdAt: 5,
      updatedAt: 25,
    },
    { id: bare, tenantId, accountId: b, channel: 'custom', createdAt: 6, updatedAt: 6 },
  ])
  let n = 0
  const message = (accountId: string, contactId: string, extra: Partial<NewMessage> = {}): NewMessage => {
    n += 1
    return {
      id: `m-${crypto.randomUUID()}`,
      tenantId,
      accountId,
      contactId,
      direction: 'inbound',
      text: `text ${n}`,
      status: 'received',
      createdAt: 100 + n,
      updatedAt: 100 + n,
      ...extra,
    }
  }
  const rows: NewMessage[] = [
    message(a, full, { upstreamId: 'up-1' }),
    message(b, bare, {
      mediaUrl: 'https://media.example/1.jpg',
      mediaContentType: 'image/jpeg',
      mediaId: 'media-1',
      mediaKind: 'image',
      mediaSize: 2048,
      mediaFileName: 'photo.jpg',
      mediaStatus: 'stored',
    }),
    message(a, full, { direction: 'outbound', status: 'sent', attempts: 1, lastAttemptAt: 150 }),
    message(a, `c-gone-${crypto.randomUUID()}`, { replyTo: 'up-1', reactions: '[{"emoji":"👍","from":"ann","at":1}]' }),
    message(b, bare, { mediaUrl: 'https://media.example/big.mp4', mediaError: 'too large', mediaStatus: 'too_large', errorCode: 7, errorMessage: 'odd' }),
    message(a, full, { text: '' }),
    message(b, bare, { direction: 'outbound', status: 'failed', errorCode: 1, errorMessage: 'refused' }),
    message(a, full, { upstreamId: 'up-2', replyTo: 'somewhere-else' }),
    { ...message(a, full), tenantId: `other-${tenantId}` },
  ]
  // One statement per row, in one batch: D1 caps a statement at 100 bound values.
  const [first, ...rest] = rows.map((r) => db.insert(messages).values(r))
  if (first) await db.batch([first, ...rest])
  const seqs = (await db.select({ seq: messages.seq }).from(messages).where(eq(messages.tenantId, tenantId)).orderBy(asc(messages.seq))).map((r) => r.seq)
  return { tenantId, a, b, seqs }
}

describe('inboundAfter', () => {
  it('answers what Drizzle’s select answers, for one account and several, at every cursor and limit', async () => {
    const { tenantId, a, b, seqs } = await storeHistory()
    const cursors = [0, ...seqs]
    const cases = [[a], [b], [a, b], [b, a], [a, b, 'acct-none'], ['acct-none']]
    let compared = 0
    for (const accountIds of cases)
      for (const after of cursors)
        for (const limit of [1, 2, 50]) {
          const answer = await inboundAfter(db, tenantId, accountIds, after, limit)
          expect(answer, `${accountIds.join('+')} after ${after} limit ${limit}`).toStrictEqual(await reference(tenantId, accountIds, after, limit))
          compared += answer.length
        }
    // The comparisons saw rows, not only empty answers.
    expect(compared).toBeGreaterThan(100)
  })

  it('decodes the contact’s booleans, keeps nulls, and answers no contact when its row is gone', async () => {
    const { tenantId, a } = await storeHistory()
    const rows = await inboundAfter(db, tenantId, [a], 0, 50)
    expect(rows.map((r) => r.message.text)).toEqual(['text 1', 'text 4', '', 'text 8'])
    expect(rows[0]?.contact).toMatchObject({ doNotDisturb: true, optedOut: true, private: false, aiPaused: true, name: 'Ann' })
    expect(rows[1]?.contact).toBeNull()
    expect(rows[1]?.message).toMatchObject({ replyTo: 'up-1', mediaUrl: null, errorCode: null })
  })

  it('answers nothing for no accounts', async () => {
    const { tenantId } = await storeHistory()
    expect(await inboundAfter(db, tenantId, [], 0, 50)).toStrictEqual([])
  })
})
