/**
 * The dry run of a send (issue 25) is side-effect free and tells the truth. fast-check drives 1,000 random dry runs
 * (POST /messages with `dry_run: true`, or POST /messages/check) between real sends, people writing in, days passing
 * and ban-risk signals coming and going, over two accounts (the custom channel, and an alpha number on its warm-up)
 * and three keys (the owner's, one holding first messages for approval, a reply key). Around every dry run it asserts
 * that nothing moved: the AccountDOs' own storage (counters, loop guards, openers, ramp, risk), the messages, the
 * events, the audit log, the tenant and its accounts. After it, the same request sent for real must do what the dry
 * run said: would_send = queued, would_queue_for_approval = held, would_fail (or an HTTP refusal) = that status and code.
 */
import { runInDurableObject } from 'cloudflare:test'
import { env } from 'cloudflare:workers'
import { and, count, eq, max } from 'drizzle-orm'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { accounts, auditLog, events, messages, tenants } from '../../../schema/d1'
import { accountStub } from '../../../worker/lib/objects'
import type { AccountRef } from '../../../worker/account/storage'
import { body, call, connectCustom, newTenant, pushInbound, settled, type TestTenant } from '../helpers'
import { FUZZ } from '../fuzz/settings'
import { adminKey } from '../safety/helpers'
import { addAccount, db, HOUR_MS, ingestVia, setClock } from '../state'

const DRY_RUNS = 1_000
const ALPHA = '+15550107777'
const TEXTS = [
  'Hello!',
  'Your order shipped',
  'Can we talk tomorrow?',
  'Thanks for writing',
  'Reminder: 10am',
  'Invoice attached',
  'See you soon',
  'Quick question',
]
/** custom people: w* wrote first, d0 asked for no messages (STOP), s* never wrote (more than a day's new contacts). */
const WROTE = ['w0', 'w1', 'w2', 'w3']
const PEOPLE = [...WROTE, 'd0', ...Array.from({ length: 16 }, (_, i) => `s${i}`)]
/** alpha people: a* wrote first, the others never did. */
const ALPHA_WROTE = ['+447700900101', '+447700900102']
const ALPHA_PEOPLE = [...ALPHA_WROTE, '+447700900201', '+447700900202', '+447700900203']

type Key = 'owner' | 'approval' | 'reply'
type Req = {
  key: Key
  account: 'custom' | 'alpha' | 'none'
  person: number
  by: 'address' | 'contact_id' | 'wrong_member'
  text: number
  replyTo: 'none' | 'theirs' | 'someone_else'
  media: 'none' | 'public' | 'private'
}
type Step = { req: Req; viaCheck: boolean; send: boolean; tickHours: number; risk: 'none' | 'raise' | 'lift'; writes: number | null }

const req: fc.Arbitrary<Req> = fc.record({
  key: fc.constantFrom<Key>('owner', 'owner', 'approval', 'reply'),
  account: fc.oneof(
    { weight: 12, arbitrary: fc.constant<Req['account']>('custom') },
    { weight: 4, arbitrary: fc.constant<Req['account']>('alpha') },
    { weight: 1, arbitrary: fc.constant<Req['account']>('none') }
  ),
  person: fc.nat({ max: 40 }),
  by: fc.constantFrom<Req['by']>('address', 'address', 'address', 'address', 'contact_id', 'contact_id', 'contact_id', 'wrong_member'),
  text: fc.nat({ max: TEXTS.length - 1 }),
  replyTo: fc.oneof(
    { weight: 12, arbitrary: fc.constant<Req['replyTo']>('none') },
    { weight: 3, arbitrary: fc.constant<Req['replyTo']>('theirs') },
    { weight: 1, arbitrary: fc.constant<Req['replyTo']>('someone_else') }
  ),
  media: fc.oneof(
    { weight: 16, arbitrary: fc.constant<Req['media']>('none') },
    { weight: 2, arbitrary: fc.constant<Req['media']>('public') },
    { weight: 1, arbitrary: fc.constant<Req['media']>('private') }
  ),
})

const step: fc.Arbitrary<Step> = fc.record({
  req,
  viaCheck: fc.boolean(),
  send: fc.oneof({ weight: 3, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
  tickHours: fc.oneof({ weight: 200, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.integer({ min: 1, max: 30 }) }),
  risk: fc.oneof({ weight: 40, arbitrary: fc.constant<Step['risk']>('none') }, { weight: 1, arbitrary: fc.constantFrom<Step['risk']>('raise', 'lift') }),
  writes: fc.oneof({ weight: 4, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: fc.nat({ max: PEOPLE.length - 1 }) }),
})

let t: TestTenant
let keys: Record<Key, string>
let customRef: AccountRef
let alphaRef: AccountRef
let now = Date.parse('2030-03-02T08:00:00.000Z')
/** The latest inbound message of each person (custom by fromId, alpha by phone): what a reply quotes. */
const lastInbound = new Map<string, string>()
/** Contact ids, for `to.contact_id`. */
const contactIds = new Map<string, string>()

async function write(person: string): Promise<void> {
  const res = await pushInbound(t, { body: person === 'd0' ? 'STOP' : `hi from ${person}`, fromId: person })
  expect(res.status, JSON.stringify(res.body)).toBe(200)
  lastInbound.set(person, String(res.body.message_id))
  contactIds.set(person, String(res.body.contact_id))
}

beforeAll(async () => {
  setClock(now)
  t = await newTenant()
  await connectCustom(t, 'dry-run')
  customRef = { tenantId: t.tenantId, accountId: 'custom', channel: 'custom' }
  alphaRef = await addAccount(t.tenantId, { id: ALPHA, channel: 'alpha_web' })
  const [approval, reply] = await Promise.all([
    adminKey(t.tenantId, { approval: true, label: 'approval agent' }),
    adminKey(t.tenantId, { scope: 'reply', label: 'replier' }),
  ])
  keys = { owner: t.key, approval: approval.key, reply: reply.key }
  for (const person of [...WROTE, 'd0']) await write(person)
  for (const phone of ALPHA_WROTE) {
    const got = await ingestVia(alphaRef, { phone }, `hi from ${phone}`)
    if (!got.stored) throw new Error('alpha seed not stored')
    lastInbound.set(phone, got.messageId)
    contactIds.set(phone, got.contactId)
  }
})

afterAll(() => {
  vi.useRealTimers()
})

/** The send body a generated request stands for. */
function sendBody(r: Req): Record<string, unknown> {
  const people = r.account === 'alpha' ? ALPHA_PEOPLE : PEOPLE
  const person = people[r.person % people.length]!
  const address = r.account === 'alpha' ? { phone: person } : { external_id: person }
  const id = contactIds.get(person)
  const to =
    r.by === 'wrong_member'
      ? r.account === 'alpha'
        ? { external_id: person }
        : { phone: '+447700900999' }
      : r.by === 'contact_id' && id
        ? { contact_id: id }
        : address
  const others = [...lastInbound.entries()].filter(([p]) => p !== person)
  const quoted = r.replyTo === 'theirs' ? lastInbound.get(person) : r.replyTo === 'someone_else' ? others[r.person % others.length]?.[1] : undefined
  return {
    ...(r.account === 'none' ? {} : { account_id: r.account === 'alpha' ? ALPHA : 'custom' }),
    to,
    text: TEXTS[r.text],
    ...(quoted ? { reply_to: quoted } : {}),
    ...(r.media === 'public' ? { media_url: 'https://example.com/photo.jpg' } : r.media === 'private' ? { media_url: 'https://10.1.2.3/photo.jpg' } : {}),
  }
}

/** Everything a send could change: each AccountDO's own tables, and the tenant's rows in D1. */
async function snapshot() {
  const objects = await Promise.all(
    [customRef, alphaRef].map((ref) =>
      runInDurableObject(accountStub(env, ref.tenantId, ref.accountId), async (instance, state) => {
        const sql = state.storage.sql
        return {
          // The stored totals lag the inbound messages by up to INBOUND_TALLY_DELAY_MS (account/totals.ts), so a
          // person's earlier message may be written into them during a dry run: compare what they count instead.
          kv: sql.exec("SELECT key, value FROM kv WHERE key <> 'totals' ORDER BY key").toArray(),
          totals: await instance.totals(),
          guards: sql.exec('SELECT * FROM contact_guard ORDER BY contact_id').toArray(),
          openers: sql.exec('SELECT * FROM openers ORDER BY id').toArray(),
        }
      })
    )
  )
  const tid = t.tenantId
  const [m, e, a, tenant, accs] = await db.batch([
    db
      .select({ n: count(), seq: max(messages.seq), updated: max(messages.updatedAt) })
      .from(messages)
      .where(eq(messages.tenantId, tid)),
    db
      .select({ n: count(), seq: max(events.seq) })
      .from(events)
      .where(eq(events.tenantId, tid)),
    db
      .select({ n: count(), seq: max(auditLog.seq) })
      .from(auditLog)
      .where(eq(auditLog.tenantId, tid)),
    db.select({ status: tenants.status, reason: tenants.suspendedReason }).from(tenants).where(eq(tenants.id, tid)),
    db
      .select({ id: accounts.id, status: accounts.status, reason: accounts.statusReason })
      .from(accounts)
      .where(and(eq(accounts.tenantId, tid))),
  ])
  return { objects, messages: m, events: e, audit: a, tenant, accounts: accs }
}

type Answer = { status: number; json: Record<string, unknown> }

async function post(path: string, key: string, json: unknown): Promise<Answer> {
  const res = await call(path, { method: 'POST', key, json })
  return { status: res.status, json: await body(res) }
}

/** What a dry run says the send will answer: status, and error_code or the send's `status`. */
function predicted(dry: Answer): { status: number; code: string } {
  if (dry.status !== 200) return { status: dry.status, code: String(dry.json.error_code) }
  const check = dry.json as { verdict: string; error: { status: number; error_code: string } | null }
  if (check.verdict === 'would_send') return { status: 202, code: 'queued' }
  if (check.verdict === 'would_queue_for_approval') return { status: 202, code: 'awaiting_approval' }
  return { status: check.error!.status, code: check.error!.error_code }
}

function actual(real: Answer): { status: number; code: string } {
  return { status: real.status, code: String(real.status === 202 ? real.json.status : real.json.error_code) }
}

describe('the dry run of a send', () => {
  it(`changes nothing in ${DRY_RUNS} random dry runs between real sends, and each predicts what the send then does`, { timeout: 600_000 }, async () => {
    const seen = new Map<string, number>()
    let sends = 0
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: DRY_RUNS, maxLength: DRY_RUNS }), async (steps) => {
        for (const [i, s] of steps.entries()) {
          if (s.tickHours > 0) {
            now += s.tickHours * HOUR_MS
            setClock(now)
          }
          if (s.risk !== 'none') {
            const ref = s.req.account === 'alpha' ? alphaRef : customRef
            await accountStub(env, t.tenantId, ref.accountId).riskReport(ref, {
              signal: 'new_chat_refused',
              active: s.risk === 'raise',
              until: now + 2 * HOUR_MS,
              detail: 'test',
            })
          }
          if (s.writes !== null) await write(PEOPLE[s.writes]!)
          const json = sendBody(s.req)
          const key = keys[s.req.key]
          const before = await snapshot()
          const dry = s.viaCheck ? await post('/v1/messages/check', key, json) : await post('/v1/messages', key, { ...json, dry_run: true })
          expect(await snapshot(), `dry run ${i} changed something: ${JSON.stringify(json)}`).toEqual(before)
          if (dry.status === 200) expect(dry.json).toMatchObject({ dry_run: true })
          const p = predicted(dry)
          seen.set(p.code, (seen.get(p.code) ?? 0) + 1)
          if (!s.send) continue
          const real = await post('/v1/messages', key, json)
          sends++
          expect(actual(real), `step ${i}: the dry run said ${JSON.stringify(dry.json)}; the send answered ${JSON.stringify(real.json)}`).toEqual(p)
          // A custom-channel send is delivered in the background: let it settle before the next snapshot.
          if (real.status === 202 && real.json.status === 'queued' && json.account_id === 'custom') await settled(t, String(real.json.message_id))
        }
      }),
      // The fuzz suites' fixed seed: `npm test` is the same run every time, and it reaches every verdict checked below.
      { numRuns: 1, endOnFailure: true, seed: FUZZ.seed }
    )
    console.log(JSON.stringify({ sends, verdicts: Object.fromEntries(seen) }))
    expect(sends).toBeGreaterThan(DRY_RUNS / 4)
    // The run reached the verdicts that matter (the generator is weighted towards them).
    const expected = ['queued', 'awaiting_approval', 'daily_send_cap', 'new_contact_cap', 'account_at_risk', 'loop_guard', 'key_scope', 'invalid_reply_to']
    for (const code of [...expected, 'contact_do_not_disturb', 'ambiguous_account', 'invalid_media_url']) {
      expect(seen.get(code) ?? 0, `no dry run answered ${code}: ${JSON.stringify([...seen])}`).toBeGreaterThan(0)
    }
  })
})
