/**
 * Records what a key did (docs/agent-safety.md): every call that changes something (any method but GET and HEAD),
 * whatever its outcome, and every call refused for the key's grant (`key_scope`, `key_account`, `key_expired`).
 * Successful reads are not logged: an agent's wait loop would write a row every few seconds and tell the owner
 * nothing. Nor are accepted inbound pushes (RECORDED_AS_MESSAGES): the stored message is their record, and a row
 * each would make the log the biggest table for a bridge's traffic while saying nothing a message does not; a
 * refused push is still logged. A dry run of a send did nothing and writes nothing. One row per call, written before the answer leaves so the log is complete when the client sees it.
 */
import type { Context } from 'hono'
import { createMiddleware } from 'hono/factory'
import { auditInsert } from '../db/audit'
import type { AppEnv } from '../env'
import { ApiError } from '../errors'

const KEY_REFUSALS = new Set(['key_scope', 'key_account', 'key_expired'])

/** High-volume writes whose success is already stored as a message (with its time, account and contact). */
export const RECORDED_AS_MESSAGES = new Set(['POST /v1/channels/custom/inbound'])

/**
 * A dry run of a send (issue 25: POST /messages/check, or POST /messages with `dry_run: true`) did nothing, so it writes
 * no entry, whatever it answered (a refusal for its key included). The body is read from Hono's cache when the route
 * parsed it, else once here.
 */
async function isDryRun(c: Context<AppEnv>): Promise<boolean> {
  if (c.req.method !== 'POST') return false
  if (c.req.path === '/v1/messages/check') return true
  if (c.req.path !== '/v1/messages' && c.req.path !== '/v1/messages/') return false
  const body: unknown = await c.req.json().catch(() => undefined)
  return typeof body === 'object' && body !== null && 'dry_run' in body && body.dry_run === true
}

export const auditTrail = createMiddleware<AppEnv>(async function auditTrail(c, next) {
  await next()
  const grant = c.get('key')
  const tenant = c.get('tenant')
  if (!grant || !tenant) return
  const code = c.error instanceof ApiError ? c.error.code : undefined
  const reads = c.req.method === 'GET' || c.req.method === 'HEAD'
  if (reads && !(code && KEY_REFUSALS.has(code))) return
  if (await isDryRun(c)) return
  const note = c.get('audit') ?? {}
  const status = c.res.status
  const ok = status < 400
  const route = note.route ?? `${c.req.method} ${c.req.path}`
  if (ok && RECORDED_AS_MESSAGES.has(route)) return
  try {
    await auditInsert(c.var.db, {
      tenantId: tenant.id,
      keyId: grant.id || null,
      keyLabel: grant.label,
      action: c.get('tool') ?? route,
      route,
      accountId: note.accountId ?? null,
      contactId: note.contactId ?? null,
      messageId: note.messageId ?? null,
      outcome: ok ? (note.outcome ?? 'accepted') : 'refused',
      code: ok ? (note.code ?? null) : (code ?? String(status)),
      status,
      createdAt: Date.now(),
    })
  } catch (err) {
    // The action already happened; a lost audit row must not turn its answer into an error.
    console.error(JSON.stringify({ msg: 'audit write failed', route, error: String(err) }))
  }
})
