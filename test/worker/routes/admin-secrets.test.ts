/**
 * Secret rotation through the real app and D1 (docs/security.md, Secret rotation): secrets sealed under k1 keep
 * opening when k2 becomes the sealing key, `POST /admin/secrets/reseal` moves every value to k2 in bounded pages,
 * and after k1 leaves the ring everything still opens. A sealed value copied to another tenant's row is refused.
 * The app runs in-process with the keyring variables of each step (the bindings stay as configured).
 */
import { createExecutionContext } from 'cloudflare:test'
import { env } from 'cloudflare:workers'
import { describe, expect, it } from 'vitest'
import { app } from '../../../worker/app'
import { ADMIN_TOKEN, admin, body, call, connectCustom, newTenant, ORIGIN, receiverChannel, type TestTenant } from '../helpers'

type Keys = { ENCRYPTION_KEY: string; ENCRYPTION_KEYS: string; ENCRYPTION_KEY_ID: string }

const K1 = 'k1:Y2hhbmdlLW1lLWZpcnN0LWtleS0zMi1ieXRlcyEhIQ=='
const K2 = 'k2:c2Vjb25kLWtleS0zMi1ieXRlcy1mb3ItdGhlLXJpbmc='

/** A client of the app under one keyring configuration. */
function under(keys: Keys) {
  return (path: string, init: RequestInit & { key?: string; adminToken?: boolean; json?: unknown } = {}) => {
    const headers = new Headers(init.headers)
    if (init.key) headers.set('Authorization', `Bearer ${init.key}`)
    if (init.adminToken) headers.set('Authorization', `Bearer ${ADMIN_TOKEN}`)
    if (init.json !== undefined) headers.set('Content-Type', 'application/json')
    const request = new Request(ORIGIN + path, { method: init.method, headers, body: init.json !== undefined ? JSON.stringify(init.json) : undefined })
    return app.fetch(request, { ...env, ...keys }, createExecutionContext())
  }
}

/** What the previous code sealed for a webhook signing secret under ENCRYPTION_KEY 'test-encryption-key' (v1). */
const V1_SEALED = 'v1.SMT6dXh6Vj0rsRs_.pHH3l0R4bdXKu0wc9_yLR9No2gFcQWZcZQnGx9a8Oww-eVmKSGGa3TQ1hWIYyETE'
const V1_PLAIN = 'whsec_fromBeforeKeyIds0123456789'

async function sealedValues(tenantId: string): Promise<string[]> {
  const rows = await env.DB.batch([
    env.DB.prepare('SELECT signing_secret AS v FROM webhooks WHERE tenant_id = ? AND signing_secret IS NOT NULL').bind(tenantId),
    env.DB.prepare('SELECT config AS v FROM channel_connections WHERE tenant_id = ?').bind(tenantId),
  ])
  return rows.flatMap((r) => (r.results as Array<{ v: string }>).map((x) => x.v))
}

/** Copies tenant `from`'s sealed column onto tenant `to`'s matching row, as a mistaken restore or hand-written SQL would. */
async function copySealed(table: string, column: string, row: string, from: TestTenant, to: TestTenant) {
  await env.DB.prepare(`UPDATE ${table} SET ${column} = (SELECT ${column} FROM ${table} WHERE tenant_id = ?1 AND ${row}) WHERE tenant_id = ?2 AND ${row}`)
    .bind(from.tenantId, to.tenantId)
    .run()
}

describe('secret rotation', () => {
  it('keeps every secret readable while k2 replaces k1, re-seals in pages, and reads all of them after k1 is gone', async () => {
    const step1 = under({ ENCRYPTION_KEY: '', ENCRYPTION_KEYS: K1, ENCRYPTION_KEY_ID: '' })
    const t = await newTenant()
    const hook = receiverChannel('rot')
    const bridge = receiverChannel('rot-bridge')
    const created = await body<{ signing_secret: string }>(
      await step1('/v1/webhooks', {
        method: 'POST',
        key: t.key,
        json: { url: hook.url, subscribed_to: ['message.received'], name: 'a', generate_signing_secret: true },
      })
    )
    await step1('/v1/webhooks', {
      method: 'POST',
      key: t.key,
      json: { url: hook.url, subscribed_to: ['message.sent'], name: 'b', generate_signing_secret: true },
    })
    expect((await step1('/v1/channels/custom', { method: 'PUT', key: t.key, json: { webhook_url: `${bridge.url}?token=s3cret` } })).status).toBe(200)
    // A value from before key ids, as an existing deployment has them: it opens under ENCRYPTION_KEY (`default`).
    await env.DB.prepare("UPDATE webhooks SET signing_secret = ? WHERE tenant_id = ? AND name = 'b'").bind(V1_SEALED, t.tenantId).run()
    expect((await sealedValues(t.tenantId)).map((v) => v.slice(0, 6)).sort()).toEqual(['v1.SMT', 'v2.k1.', 'v2.k1.'])

    const readAll = async (client: ReturnType<typeof under>) => ({
      a: (await body<{ signing_secret: string }>(await client('/v1/webhooks/a/signing-secret', { key: t.key }))).signing_secret,
      b: (await body<{ signing_secret: string }>(await client('/v1/webhooks/b/signing-secret', { key: t.key }))).signing_secret,
      custom: (await body<{ webhook_url: string }>(await client('/v1/channels/custom', { key: t.key }))).webhook_url,
    })
    // The masked URL is computed from the opened config: it only comes back when the value opens.
    const expected = {
      a: created.signing_secret,
      b: V1_PLAIN,
      custom: (await readAll(under({ ENCRYPTION_KEY: 'test-encryption-key', ENCRYPTION_KEYS: K1, ENCRYPTION_KEY_ID: 'k1' }))).custom,
    }
    expect(expected.custom).toMatch(/^http:\/\/127\.0\.0\.1:\d+\//)

    // k2 joins as the sealing key; k1 and the old ENCRYPTION_KEY stay in the ring while the re-seal runs.
    const step2 = under({ ENCRYPTION_KEY: 'test-encryption-key', ENCRYPTION_KEYS: `${K1},${K2}`, ENCRYPTION_KEY_ID: 'k2' })
    expect(await readAll(step2)).toEqual(expected)
    const before = await body<{ key_id: string; key_ids: string[]; total_not_current: number }>(await step2('/admin/secrets', { adminToken: true }))
    expect(before).toMatchObject({ key_id: 'k2', key_ids: ['default', 'k1', 'k2'] })
    expect(before.total_not_current).toBeGreaterThanOrEqual(3)

    // Bounded pages, resumed by cursor; a second full walk finds nothing left to do (idempotent).
    let cursor: string | null | undefined
    let resealed = 0
    let pages = 0
    do {
      const page = await body<{ resealed: number; unreadable: unknown[]; next_cursor: string | null }>(
        await step2('/admin/secrets/reseal', { method: 'POST', adminToken: true, json: cursor ? { cursor, limit: 1 } : { limit: 1 } })
      )
      expect(page.unreadable).toEqual([])
      resealed += page.resealed
      cursor = page.next_cursor
      pages++
    } while (cursor && pages < 100)
    expect(cursor).toBeNull()
    expect(resealed).toBe(before.total_not_current)
    expect(pages).toBeGreaterThan(resealed)
    expect((await sealedValues(t.tenantId)).every((v) => v.startsWith('v2.k2.'))).toBe(true)
    expect(await body(await step2('/admin/secrets/reseal', { method: 'POST', adminToken: true }))).toMatchObject({ resealed: 0, next_cursor: null })
    expect(await body(await step2('/admin/secrets', { adminToken: true }))).toMatchObject({ total_not_current: 0 })
    expect(await readAll(step2)).toEqual(expected)

    // k1 and ENCRYPTION_KEY removed: only k2 is left, and everything still opens.
    const step3 = under({ ENCRYPTION_KEY: '', ENCRYPTION_KEYS: K2, ENCRYPTION_KEY_ID: 'k2' })
    expect(await readAll(step3)).toEqual(expected)
    const test = await body<{ delivered: boolean }>(await step3('/v1/webhooks/a/test', { method: 'POST', key: t.key }))
    expect(test.delivered).toBe(true)
  })
})

describe('a sealed value bound to its row', () => {
  it('does not open when copied to another tenant’s subscription', async () => {
    const [a, b] = [await newTenant(), await newTenant()]
    const ch = receiverChannel('bound')
    for (const t of [a, b]) {
      const res = await call('/v1/webhooks', {
        method: 'POST',
        key: t.key,
        json: { url: ch.url, subscribed_to: ['message.received'], name: 'h', generate_signing_secret: true },
      })
      expect(res.status).toBe(201)
    }
    await copySealed('webhooks', 'signing_secret', "name = 'h'", a, b)
    const copied = await call('/v1/webhooks/h/signing-secret', { key: b.key })
    expect(copied.status).toBe(500)
    expect(await copied.text()).not.toContain('whsec_')
    expect((await call('/v1/webhooks/h/signing-secret', { key: a.key })).status).toBe(200)
  })

  it('does not open a custom channel config copied to another tenant', async () => {
    const [a, b] = [await newTenant(), await newTenant()]
    await connectCustom(a, 'bound-a')
    await connectCustom(b, 'bound-b')
    await copySealed('channel_connections', 'config', "account_id = 'custom'", a, b)
    const got = await call('/v1/channels/custom', { key: b.key })
    expect(got.status).toBe(500)
    expect(await got.text()).not.toContain('bound-a')
  })
})

describe('/admin/secrets authentication', () => {
  it('refuses a missing or wrong admin token with 401 and answers the right one', async () => {
    expect((await call('/admin/secrets')).status).toBe(401)
    expect((await call('/admin/secrets/reseal', { method: 'POST', headers: { Authorization: 'Bearer not-the-admin-token-at-all-000000000' } })).status).toBe(
      401
    )
    const t = await newTenant()
    expect((await call('/admin/secrets/reseal', { method: 'POST', key: t.key })).status).toBe(401)
    expect((await admin('/admin/secrets')).status).toBe(200)
  })

  it('refuses a cursor it did not issue', async () => {
    const res = await admin('/admin/secrets/reseal', { method: 'POST', json: { cursor: 'bm90LWEtY3Vyc29y' } })
    expect(res.status).toBe(400)
  })
})
