/** Helpers for the agent-safety tests: keys of a scope for a tenant, through the admin API, and a stored media item. */
import { env } from 'cloudflare:workers'
import { expect } from 'vitest'
import { upsertMedia } from '../../../worker/db/media'
import { mediaIdFor, mediaKey } from '../../../worker/media/ids'
import { admin, body, type TestTenant } from '../helpers'
import { db } from '../state'

export type ScopedKey = { id: string; key: string }

export async function adminKey(tenantId: string, fields: Record<string, unknown>): Promise<ScopedKey> {
  const res = await admin(`/admin/tenants/${tenantId}/keys`, { method: 'POST', json: fields })
  expect(res.status, await res.clone().text()).toBe(201)
  return body<ScopedKey>(res)
}

/** A read, a reply and a full (default) key of one tenant. */
export async function keysOfEveryScope(t: TestTenant): Promise<Record<'read' | 'reply' | 'full', string>> {
  const [read, reply] = await Promise.all([
    adminKey(t.tenantId, { scope: 'read', label: 'reader' }),
    adminKey(t.tenantId, { scope: 'reply', label: 'replier' }),
  ])
  return { read: read.key, reply: reply.key, full: t.key }
}

/** A small PNG stored for an account, as an upload would leave it (bucket object and row); answers its id. */
export async function storedImage(tenantId: string, accountId: string, upstreamId: string): Promise<string> {
  const id = await mediaIdFor(tenantId, accountId, upstreamId)
  const bytes = new Uint8Array([0x89, 0x50, 0x4e, 0x47])
  await env.MEDIA.put(mediaKey(tenantId, accountId, id), bytes)
  await upsertMedia(db, {
    id,
    tenantId,
    accountId,
    kind: 'image',
    contentType: 'image/png',
    size: bytes.length,
    fileName: null,
    status: 'stored',
    reason: null,
    createdAt: Date.now(),
  })
  return id
}
