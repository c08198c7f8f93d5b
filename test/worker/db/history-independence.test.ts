/**
 * Issue 22 §3: no per-request query reads the history. One account gets 200,000 stored messages (seeded in one
 * INSERT … SELECT over a recursive CTE), and the D1 rows each endpoint reads (D1's own `meta.rows_read`, summed by a
 * metering binding handed to the Worker) must stay within a small bound that does not depend on that history:
 * the SMS status (`last_inbound_at`/`last_outbound_at`), the alpha status (`message_count`), the message lists (all,
 * outbound only, and for a key limited to accounts other than the busiest) and a wait, the usage and account lists, and a
 * Messenger read receipt's lookup.
 */
import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test'
import { env } from 'cloudflare:workers'
import { beforeAll, describe, expect, it } from 'vitest'
import worker from '../../../worker/index'
import { unreadOutboundBefore } from '../../../worker/db/messages'
import { database } from '../../../worker/db/client'
import { connectTwilio } from '../channels/sms/sms-helpers'
import { D1Meter } from '../d1-meter'
import { admin, body, ORIGIN, newTenant, type TestTenant } from '../helpers'
import { addAccount, DAY_MS } from '../state'

const HISTORY = 200_000
/** Rows one status or list answer may read whatever the history: the tenant, its key, accounts, a page of 50. */
const BOUND = 60

const SMS_NUMBER = '+447700900321'
const ALPHA_NUMBER = '+447700900654'
/** A number the limited key may use besides the SMS one, with no messages at all. */
const QUIET_NUMBER = '+447700900987'
const meter = new D1Meter(env.DB)

/** One request to the Worker with the metered D1 as its binding; answers the status and the rows it read. */
async function metered(key: string, path: string): Promise<{ status: number; rowsRead: number; json: Record<string, unknown> }> {
  const ctx = createExecutionContext()
  meter.reset()
  const res = await worker.fetch(new Request(ORIGIN + path, { headers: { Authorization: `Bearer ${key}` } }), { ...env, DB: meter.d1 }, ctx)
  const json = (await res.json()) as Record<string, unknown>
  await waitOnExecutionContext(ctx)
  return { status: res.status, rowsRead: meter.reset().rowsRead, json }
}

/**
 * `count` messages of one account over the last 60 days, from 1,000 people: in the older half 3 inbound to 1
 * outbound, the newer half inbound only (a bridge pushing while nothing is sent), so an outbound list must reach
 * past 100,000 inbound rows unless an index leads it to the outbound ones.
 */
async function seed(tenantId: string, accountId: string, count: number): Promise<void> {
  const start = Date.now() - 60 * DAY_MS
  const step = Math.floor((60 * DAY_MS) / count)
  await env.DB.prepare(
    `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?3)
     INSERT INTO messages (id, tenant_id, account_id, contact_id, direction, text, status, upstream_id, created_at, updated_at)
     SELECT 'msg_seed_' || ?2 || '_' || i, ?1, ?2, 'ct_seed_' || (i % 1000),
       CASE WHEN i % 4 = 0 AND i <= ?3 / 2 THEN 'outbound' ELSE 'inbound' END, 'seeded message number ' || i,
       CASE WHEN i % 4 = 0 AND i <= ?3 / 2 THEN 'delivered' ELSE 'received' END, 'up_' || i, ?4 + i * ?5, ?4 + i * ?5
     FROM n`
  )
    .bind(tenantId, accountId, count, start, step)
    .run()
}

/** `limited`: called with a key that may use only the SMS and a quiet number (its list must not walk the alpha number's history). */
const ENDPOINTS = (sms: string, alpha: string) => [
  { name: 'SMS status', path: `/v1/channels/sms?phone_number=${encodeURIComponent(sms)}` },
  { name: 'alpha status', path: `/v1/channels/alpha-web/connections/${encodeURIComponent(alpha)}/status` },
  { name: 'message list', path: `/v1/messages?account_id=${encodeURIComponent(sms)}&limit=50` },
  { name: 'outbound message list', path: `/v1/messages?account_id=${encodeURIComponent(sms)}&direction=outbound&limit=50` },
  { name: 'outbound message list of all accounts', path: '/v1/messages?direction=outbound&limit=50' },
  { name: 'message list of a key limited to two accounts', path: '/v1/messages?limit=50', limited: true },
  { name: 'wait', path: '/v1/messages/wait?timeout_s=0' },
  { name: 'usage', path: '/v1/usage' },
  { name: 'accounts', path: '/v1/accounts' },
]

describe('history independence (200,000 stored messages in one account)', () => {
  let t: TestTenant
  let limitedKey: string
  const keyFor = (e: { limited?: boolean }) => (e.limited ? limitedKey : t.key)
  const before = new Map<string, number>()
  const after = new Map<string, number>()

  beforeAll(async () => {
    t = await newTenant()
    await connectTwilio(t, SMS_NUMBER)
    await addAccount(t.tenantId, { id: ALPHA_NUMBER, channel: 'alpha_web' })
    const minted = await admin(`/admin/tenants/${t.tenantId}/keys`, { method: 'POST', json: { scope: 'read', accounts: [SMS_NUMBER, QUIET_NUMBER] } })
    limitedKey = (await body<{ key: string }>(minted)).key
    for (const e of ENDPOINTS(SMS_NUMBER, ALPHA_NUMBER)) {
      await metered(keyFor(e), e.path) // warms the key cache, as a running isolate has it
      before.set(e.name, (await metered(keyFor(e), e.path)).rowsRead)
    }
    await seed(t.tenantId, SMS_NUMBER, HISTORY)
    await seed(t.tenantId, ALPHA_NUMBER, HISTORY)
    for (const e of ENDPOINTS(SMS_NUMBER, ALPHA_NUMBER)) {
      const r = await metered(keyFor(e), e.path)
      expect(r.status, `${e.name}: ${JSON.stringify(r.json)}`).toBe(200)
      after.set(e.name, r.rowsRead)
    }
    console.log(
      `history-independence rows read (empty → ${HISTORY} messages): ${JSON.stringify(Object.fromEntries([...after].map(([k, v]) => [k, [before.get(k), v]])))}`
    )
  }, 120_000)

  for (const e of ENDPOINTS(SMS_NUMBER, ALPHA_NUMBER)) {
    it(`reads at most ${BOUND} D1 rows for the ${e.name}, with or without the history`, () => {
      expect(after.get(e.name)).toBeLessThanOrEqual(BOUND)
    })
  }

  it('still reports the history in the status answers', async () => {
    const sms = await metered(t.key, `/v1/channels/sms?phone_number=${encodeURIComponent(SMS_NUMBER)}`)
    expect(sms.json.last_inbound_at).not.toBeNull()
    expect(sms.json.last_outbound_at).not.toBeNull()
    const alpha = await metered(t.key, `/v1/channels/alpha-web/connections/${encodeURIComponent(ALPHA_NUMBER)}/status`)
    expect(alpha.json.message_count).toBe(HISTORY)
  })

  it("reads only one person's outbound messages for a Messenger read watermark", async () => {
    const db = database(meter.d1)
    const totals = await meter.measure(() => unreadOutboundBefore(db, t.tenantId, SMS_NUMBER, 'ct_seed_0', Date.now()))
    // ct_seed_0 holds every 1,000th message: 200, of which the 100 in the older half are outbound. Those are what
    // the watermark may cover; the other 399,800 messages of the two accounts are not its business.
    expect(totals.rowsRead).toBeLessThanOrEqual(101)
  })
})
