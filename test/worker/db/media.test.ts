/**
 * Media rows (worker/db/media.ts): a retention sweep's page is 500 items, more than the 100 parameters D1 binds per
 * statement, so the page's delete must not spread its ids over `in (?, ?, …)` (it failed with "too many SQL
 * variables", and with it every later part of the cron run).
 */
import { env } from 'cloudflare:workers'
import { describe, expect, it } from 'vitest'
import { media } from '../../../schema/d1'
import { database } from '../../../worker/db/client'
import { mediaKey } from '../../../worker/media/ids'
import { MEDIA_SWEEP_PAGE, sweepExpiredMedia } from '../../../worker/media/retention'

const db = database(env.DB)

describe('media retention', () => {
  it('deletes a whole sweep page of expired items, rows and objects', async () => {
    const tenantId = `ten_media_${Date.now()}`
    const rows = Array.from({ length: MEDIA_SWEEP_PAGE }, (_, i) => ({
      id: `med_${String(i).padStart(24, '0')}`,
      tenantId,
      accountId: 'custom',
      kind: 'image' as const,
      contentType: 'image/jpeg',
      size: 1,
      status: 'stored' as const,
      createdAt: 1_000 + i,
    }))
    // D1 binds 100 parameters a statement: 9 columns a row, 10 rows an insert.
    for (let i = 0; i < rows.length; i += 10) await db.insert(media).values(rows.slice(i, i + 10))
    await Promise.all(rows.map((r) => env.MEDIA.put(mediaKey(tenantId, 'custom', r.id), 'x')))
    expect(await sweepExpiredMedia(env.MEDIA, db, 1_000, 10_000_000)).toBe(MEDIA_SWEEP_PAGE)
    const left = await env.DB.prepare('SELECT count(*) AS n FROM media WHERE tenant_id = ?').bind(tenantId).first<{ n: number }>()
    expect(left?.n).toBe(0)
    expect(await env.MEDIA.head(mediaKey(tenantId, 'custom', rows[0]!.id))).toBeNull()
  })
})
