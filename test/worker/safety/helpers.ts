/** Helpers for the agent-safety tests: keys of a scope for a tenant, through the admin API. */
import { expect } from 'vitest'
import { admin, body, type TestTenant } from '../helpers'

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
