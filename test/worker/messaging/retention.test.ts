/**
 * Message retention (issue 22 §1; docs/api.md "Retention and archive"), driven through the Worker's own cron on an
 * injected clock: a message past its tenant's retention is archived to R2 and deleted, one inside it stays, the
 * archive holds it byte for byte as the API showed it; the admin's setting (0 = forever) rules; contacts that only
 * old messages referred to go, those carrying a person's wish (STOP) stay, and pruning never resets a limit; media
 * goes with its message; each run is bounded and a long backlog drains over several runs, a day in several parts.
 */
import { createScheduledController } from 'cloudflare:test'
import { env } from 'cloudflare:workers'
import { and, eq } from 'drizzle-orm'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { contacts, events, media, messages, tenants } from '../../../schema/d1'
import worker from '../../../worker/index'
import { accountFigures } from '../../../worker/db/account-stats'
import { mediaKey } from '../../../worker/media/ids'
import { RETENTION_STEPS_PER_SWEEP, RETENTION_WINDOW, retentionCutoff, sweepRetention } from '../../../worker/messaging/retention'
import { admin, body, call, connectCustom, newTenant, pushInbound, send, settled, type TestTenant } from '../helpers'
import { contactRow, DAY_MS, db, messageRow, setClock } from '../state'

afterEach(() => {
  vi.useRealTimers()
})

const T0 = Date.parse('2030-01-10T12:00:00.000Z')

/** Runs the Worker's cron at `at` until `tenantId` has been visited to the end (other tenants of this file share the D1). */
async function cronUntilDone(tenantId: string, at: number): Promise<void> {
  for (let run = 0; run < 50; run++) {
    await worker.scheduled(createScheduledController({ scheduledTime: at, cron: '* * * * *' }), env)
    const row = await db.select({ at: tenants.retentionCheckedAt }).from(tenants).where(eq(tenants.id, tenantId)).get()
    if (row?.at === at) return
  }
  throw new Error(`the cron never finished tenant ${tenantId}`)
}

async function archive(t: TestTenant, accountId: string, date: string, key = t.key) {
  const res = await call(`/v1/messages/archive?account_id=${encodeURIComponent(accountId)}&date=${date}`, { key })
  return { status: res.status, type: res.headers.get('content-type'), text: new TextDecoder().decode(await res.arrayBuffer()) }
}

async function pushed(t: TestTenant, fromId: string, text: string): Promise<string> {
  const r = await pushInbound(t, { body: text, fromId })
  expect(r.status, JSON.stringify(r.body)).toBe(200)
  return String(r.body.message_id)
}

describe('the retention cron', () => {
  it('archives and deletes a message past the retention, keeps one inside it, and the archive holds it byte for byte', async () => {
    setClock(T0)
    const t = await newTenant()
    await connectCustom(t)
    const old = await pushed(t, 'ann', 'an old message')
    const reply = await send(t, { to: { external_id: 'ann' }, text: 'an old reply' })
    expect(reply.status).toBe(202)
    expect((await settled(t, String(reply.body.message_id))).status).toBe('sent')
    const oldWire = await (await call(`/v1/messages/${old}`, { key: t.key })).text()
    setClock(T0 + 95 * DAY_MS)
    const recent = await pushed(t, 'bob', 'a message inside the retention')

    await cronUntilDone(t.tenantId, T0 + 100 * DAY_MS)

    expect((await call(`/v1/messages/${old}`, { key: t.key })).status).toBe(404)
    expect((await call(`/v1/messages/${String(reply.body.message_id)}`, { key: t.key })).status).toBe(404)
    expect((await call(`/v1/messages/${recent}`, { key: t.key })).status).toBe(200)
    const day = await archive(t, 'custom', '2030-01-10')
    expect(day.status).toBe(200)
    expect(day.type).toContain('application/x-ndjson')
    const lines = day.text.split('\n')
    expect(lines.pop()).toBe('')
    expect(lines).toHaveLength(2)
    expect(lines[0]).toBe(oldWire)
    expect(JSON.parse(lines[1]!)).toMatchObject({ id: reply.body.message_id, direction: 'outbound', text: 'an old reply' })
    expect((await call('/v1/messages?account_id=custom', { key: t.key }).then(body<{ messages: unknown[] }>)).messages).toHaveLength(1)
    // The account's figures (the alpha and SMS status answers) follow the deletes.
    expect(await accountFigures(db, t.tenantId, 'custom')).toMatchObject({ messageCount: 1, lastInboundAt: T0 + 95 * DAY_MS })
  })

  it('keeps messages forever for a tenant the admin set to 0, and applies a shorter setting at the next run', async () => {
    setClock(T0)
    const forever = await newTenant()
    const short = await newTenant()
    await connectCustom(forever)
    await connectCustom(short)
    const kept = await pushed(forever, 'ann', 'kept forever')
    setClock(T0 + 10 * DAY_MS)
    const gone = await pushed(short, 'ann', 'ten days before the run')
    expect((await admin(`/admin/tenants/${forever.tenantId}`, { method: 'PATCH', json: { message_retention_days: 0 } })).status).toBe(200)
    expect((await admin(`/admin/tenants/${short.tenantId}`, { method: 'PATCH', json: { message_retention_days: 7 } })).status).toBe(200)

    const at = T0 + 20 * DAY_MS
    await cronUntilDone(forever.tenantId, at)
    await cronUntilDone(short.tenantId, at)
    expect((await call(`/v1/messages/${kept}`, { key: forever.key })).status).toBe(200)
    expect((await call(`/v1/messages/${gone}`, { key: short.key })).status).toBe(404)
    expect((await archive(short, 'custom', '2030-01-20')).status).toBe(200)
  })
})

describe('the cron run', () => {
  it('runs message retention even when a sweep before it fails, and still reports the failure', async () => {
    setClock(T0)
    const t = await newTenant()
    await connectCustom(t)
    const old = await pushed(t, 'ann', 'old')
    const at = T0 + 100 * DAY_MS
    // An event past the 7-day log whose delete fails: the webhook sweep, first of the run, throws.
    await db
      .insert(events)
      .values({ id: `evt_stuck_${t.tenantId}`, tenantId: t.tenantId, accountId: 'custom', type: 'x', payload: '{}', createdAt: 1, dispatchedAt: 1 })
    await env.DB.prepare("CREATE TRIGGER fault_events_delete BEFORE DELETE ON events BEGIN SELECT RAISE(ABORT, 'injected D1 fault'); END").run()
    try {
      // First in line, ahead of this file's other tenants.
      await db.update(tenants).set({ retentionCheckedAt: -1 }).where(eq(tenants.id, t.tenantId))
      await expect(worker.scheduled(createScheduledController({ scheduledTime: at, cron: '* * * * *' }), env)).rejects.toThrow('cron sweep')
    } finally {
      await env.DB.prepare('DROP TRIGGER fault_events_delete').run()
    }
    expect(await messageRow(old)).toBeUndefined()
  })
})

describe('contacts', () => {
  it('deletes a contact only old messages referred to, keeps one that said STOP, and the loop guard survives the pruning', async () => {
    setClock(T0)
    const t = await newTenant()
    await connectCustom(t)
    await pushed(t, 'ann', 'hello')
    for (let i = 0; i < 3; i++) {
      const sent = await send(t, { to: { external_id: 'ann' }, text: `follow-up ${i}` })
      expect(sent.status).toBe(202)
      // Delivered before the clock moves: a send still queued is in play and kept, and so would its contact be.
      expect((await settled(t, String(sent.body.message_id))).status).toBe('sent')
    }
    await pushed(t, 'stopper', 'STOP')
    const annId = (await db
      .select()
      .from(contacts)
      .where(and(eq(contacts.tenantId, t.tenantId), eq(contacts.externalId, 'ann')))
      .get())!.id
    const stopperId = (await db
      .select()
      .from(contacts)
      .where(and(eq(contacts.tenantId, t.tenantId), eq(contacts.externalId, 'stopper')))
      .get())!.id

    setClock(T0 + 100 * DAY_MS)
    await cronUntilDone(t.tenantId, T0 + 100 * DAY_MS)

    expect(await contactRow(t.tenantId, annId)).toBeUndefined()
    expect(await contactRow(t.tenantId, stopperId)).toMatchObject({ doNotDisturb: true })
    // The person's guard state lives in the AccountDO under the same (address-derived) id: 3 sends since they last wrote.
    const again = await send(t, { to: { external_id: 'ann' }, text: 'one more' })
    expect(again).toMatchObject({ status: 429, body: { error_code: 'loop_guard' } })
    expect((await send(t, { to: { external_id: 'stopper' }, text: 'hi' })).body).toMatchObject({ error_code: 'contact_do_not_disturb' })
  })

  it('keeps a contact while a newer message refers to it', async () => {
    setClock(T0)
    const t = await newTenant()
    await connectCustom(t)
    await pushed(t, 'ann', 'old')
    setClock(T0 + 95 * DAY_MS)
    expect((await send(t, { to: { external_id: 'ann' }, text: 'recent' })).status).toBe(202)
    await cronUntilDone(t.tenantId, T0 + 100 * DAY_MS)
    const ann = await db
      .select()
      .from(contacts)
      .where(and(eq(contacts.tenantId, t.tenantId), eq(contacts.externalId, 'ann')))
      .get()
    expect(ann).toBeDefined()
  })
})

describe('media', () => {
  it('deletes the stored media of a deleted message, object and row', async () => {
    setClock(T0)
    const t = await newTenant()
    await connectCustom(t)
    const id = await pushed(t, 'ann', 'a photo')
    const mediaId = 'med_0123456789abcdef01234567'
    await env.MEDIA.put(mediaKey(t.tenantId, 'custom', mediaId), 'bytes')
    await db
      .insert(media)
      .values({ id: mediaId, tenantId: t.tenantId, accountId: 'custom', kind: 'image', contentType: 'image/jpeg', size: 5, status: 'stored', createdAt: T0 })
    await db
      .update(messages)
      .set({ mediaId, mediaUrl: `https://gateway.test/media/${mediaId}` })
      .where(eq(messages.id, id))
    await cronUntilDone(t.tenantId, T0 + 100 * DAY_MS)
    expect(await messageRow(id)).toBeUndefined()
    expect(await env.MEDIA.head(mediaKey(t.tenantId, 'custom', mediaId))).toBeNull()
    expect(await db.select().from(media).where(eq(media.id, mediaId)).get()).toBeUndefined()
  })
})

describe('bounded runs', () => {
  it('deletes at most its steps’ worth per run, drains a backlog over runs, and archives a day in ordered parts', async () => {
    const t = await newTenant()
    const perRun = RETENTION_STEPS_PER_SWEEP * RETENTION_WINDOW
    const total = perRun + 1234
    await env.DB.prepare(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?2)
       INSERT INTO messages (id, tenant_id, account_id, contact_id, direction, text, status, created_at, updated_at)
       SELECT 'msg_backlog_' || i, ?1, 'custom', 'ct_backlog', 'inbound', 'backlog ' || i, 'received', ?3 + i, ?3 + i FROM n`
    )
      .bind(t.tenantId, total, T0)
      .run()
    const at = T0 + 100 * DAY_MS
    // Straight at the sweep: this file's other tenants must not take the run's steps.
    await db.update(tenants).set({ retentionCheckedAt: 1 }).where(eq(tenants.id, t.tenantId))
    const first = await sweepRetention(env, at)
    expect(first).toMatchObject({ steps: RETENTION_STEPS_PER_SWEEP, deleted: perRun })
    expect((await db.select({ at: tenants.retentionCheckedAt }).from(tenants).where(eq(tenants.id, t.tenantId)).get())!.at).toBeLessThan(at)
    await cronUntilDone(t.tenantId, at)
    const left = await env.DB.prepare('SELECT count(*) AS n FROM messages WHERE tenant_id = ?').bind(t.tenantId).first<{ n: number }>()
    expect(left!.n).toBe(0)
    const day = await archive(t, 'custom', '2030-01-10')
    const ids = day.text
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { id: string }).id)
    expect(ids).toHaveLength(total)
    expect(ids[0]).toBe('msg_backlog_1')
    expect(ids.at(-1)).toBe(`msg_backlog_${total}`)
  }, 60_000)

  it('cuts at whole UTC days', () => {
    expect(retentionCutoff(90, Date.parse('2030-04-20T18:00:00Z'))).toBe(Date.parse('2030-01-20T00:00:00Z'))
  })
})

describe('GET /v1/messages/archive', () => {
  it('answers 404 for a day with nothing archived, 400 for a malformed date, and nothing of another tenant', async () => {
    setClock(T0)
    const t = await newTenant()
    const other = await newTenant()
    await connectCustom(t)
    await pushed(t, 'ann', 'old')
    await cronUntilDone(t.tenantId, T0 + 100 * DAY_MS)
    expect(await archive(t, 'custom', '2030-01-11')).toMatchObject({ status: 404 })
    expect(JSON.parse((await archive(t, 'custom', '2030-01-11')).text)).toMatchObject({ error_code: 'archive_not_found' })
    expect(JSON.parse((await archive(t, 'custom', '10-01-2030')).text)).toMatchObject({ error_code: 'invalid_date' })
    expect((await archive(t, 'custom', '2030-01-10', other.key)).status).toBe(404)
    expect((await call('/v1/messages/archive?account_id=custom&date=2030-01-10')).status).toBe(401)
  })

  it('is read like messages: a read key may, a key limited to other accounts may not', async () => {
    setClock(T0)
    const t = await newTenant()
    await connectCustom(t)
    await pushed(t, 'ann', 'old')
    await cronUntilDone(t.tenantId, T0 + 100 * DAY_MS)
    const mint = async (json: unknown) => body<{ key: string }>(await admin(`/admin/tenants/${t.tenantId}/keys`, { method: 'POST', json }))
    const reader = await mint({ scope: 'read' })
    const elsewhere = await mint({ scope: 'read', accounts: ['+15550001'] })
    expect((await archive(t, 'custom', '2030-01-10', reader.key)).status).toBe(200)
    const refused = await archive(t, 'custom', '2030-01-10', elsewhere.key)
    expect(refused.status).toBe(403)
    expect(JSON.parse(refused.text)).toMatchObject({ error_code: 'key_account' })
  })
})
