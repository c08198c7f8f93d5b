/**
 * `Idempotency-Key` on creating POSTs (docs/idempotency.md; draft-ietf-httpapi-idempotency-key-header): a route
 * declares the header in its definition (schema/api/common.ts `IdempotencyKeyHeader`, which also puts it in the
 * OpenAPI document and the MCP tool's arguments), and /v1 runs this middleware for exactly those routes. The first request with
 * a key claims it in D1 and its answer is kept, sealed, for 24 h per tenant and key; a retry of the same request
 * gets that answer again byte for byte, marked `Idempotent-Replayed: true`, and nothing runs twice.
 *
 * Kept in D1, not in the AccountDO: a send's account is often known only inside the route (picked as the one
 * connected account), other creating routes have no account at all, and the key belongs to the tenant; D1's rows
 * are keyed by tenant, so they move with the tenant's data when D1 is split per tenant. Requests without the header
 * cost nothing; with it, one D1 batch before the route and one write after it.
 */
import type { OpenAPIHono } from '@hono/zod-openapi'
import { createMiddleware } from 'hono/factory'
import { matchedRoutes } from 'hono/route'
import { z } from 'zod'
import { IDEMPOTENCY_HEADER, IDEMPOTENCY_KEY_MAX } from '../../schema/api/common'
import { keyring } from '../config'
import type { Db } from '../db/client'
import { claimIdempotencyKey, releaseIdempotencyKey, storeIdempotentAnswer } from '../db/idempotency'
import type { Context, Next } from 'hono'
import type { AppEnv } from '../env'
import { ApiError } from '../errors'
import { sha256Hex } from '../lib/crypto'
import { newId } from '../lib/ids'
import { seal, unseal, type SealedAt } from '../lib/sealed'

export const IDEMPOTENT_REPLAYED_HEADER = 'Idempotent-Replayed'
/** A retry that finds the first request still running waits this long: creating routes answer within seconds. */
export const IN_PROGRESS_RETRY_AFTER_S = 1
/** The headers of the first answer that a replay repeats; rate-limit headers describe the retry itself. */
const KEPT_HEADERS = ['content-type', 'location'] as const

const KeptAnswer = z.object({ headers: z.record(z.string(), z.string()), body: z.string() })

/**
 * Whether an answer is kept for replay: every answer that decided the request. A 429 or a 5xx is not kept (nothing
 * was done; a send refused by a daily cap must go through with the same key after Retry-After), and the key is free.
 */
export function keepsAnswer(status: number): boolean {
  return status < 500 && status !== 429
}

/** JSON with object keys sorted at every level, so key order and spacing do not make two bodies differ. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`
  }
  return JSON.stringify(value) ?? 'null'
}

function canonicalBody(text: string): string {
  try {
    return canonicalJson(JSON.parse(text))
  } catch {
    return text
  }
}

/**
 * What makes two requests the same one: method, path with query, the API key that sent it (a replay never shows
 * one key's answer to another) and the canonical body.
 */
export function requestFingerprint(method: string, url: string, keyId: string, body: string): Promise<string> {
  const u = new URL(url)
  u.searchParams.sort()
  return sha256Hex(JSON.stringify([method, u.pathname, u.search, keyId, canonicalBody(body)]))
}

/** The key as given, checked: visible ASCII, 1 to 255 characters. */
function checkedKey(raw: string): string {
  if (raw.length === 0 || raw.length > IDEMPOTENCY_KEY_MAX || !/^[\x21-\x7e]+$/.test(raw)) {
    throw new ApiError(400, 'invalid_idempotency_key', `Idempotency-Key must be 1 to ${IDEMPOTENCY_KEY_MAX} visible ASCII characters`)
  }
  return raw
}

function isDryRun(text: string): boolean {
  try {
    const body: unknown = JSON.parse(text)
    return typeof body === 'object' && body !== null && 'dry_run' in body && body.dry_run === true
  } catch {
    return false
  }
}

function replay(status: number, kept: z.infer<typeof KeptAnswer>): Response {
  const headers = new Headers(kept.headers)
  headers.set(IDEMPOTENT_REPLAYED_HEADER, 'true')
  return new Response(kept.body, { status, headers })
}

type Held = { db: Db; tenantId: string; keyHash: string; claim: string; at: SealedAt }

/** Keeps the first answer, or frees the key; a failure is logged, never turned into another answer. */
async function settle(env: Env, held: Held, res: Response): Promise<void> {
  try {
    if (!keepsAnswer(res.status)) {
      await releaseIdempotencyKey(held.db, held.tenantId, held.keyHash, held.claim)
      return
    }
    const headers: Record<string, string> = {}
    for (const name of KEPT_HEADERS) {
      const value = res.headers.get(name)
      if (value !== null) headers[name] = value
    }
    const sealed = await seal(keyring(env), held.at, JSON.stringify({ headers, body: await res.clone().text() }))
    await storeIdempotentAnswer(held.db, held.tenantId, held.keyHash, held.claim, res.status, sealed)
  } catch (err) {
    // The request did act; its answer still goes out. The key stays claimed until its lease lapses.
    console.error(JSON.stringify({ msg: 'idempotency answer not kept', status: res.status, error: String(err) }))
  }
}

/** Whether a route definition declares the Idempotency-Key header. */
export function declaresIdempotencyKey(route: { request?: { headers?: unknown } }): boolean {
  const headers = route.request?.headers
  return headers instanceof z.ZodObject && IDEMPOTENCY_HEADER in headers.shape
}

/** `POST /v1/messages/:id`: a route as Hono registers it, from an OpenAPI path relative to `prefix`. */
function honoRoute(method: string, prefix: string, openApiPath: string): string {
  return `${method.toUpperCase()} ${prefix}${openApiPath.replace(/\/{(.+?)}/g, '/:$1')}`
}

/**
 * The middleware for every route under `prefix` whose definition declares the header; the definitions are read at
 * the first request, once every route is mounted. The route is the one Hono runs for the request (its matched
 * routes). A header sent to any other route is ignored.
 */
export function idempotency(prefix: string, definitions: () => OpenAPIHono<AppEnv>['openAPIRegistry']['definitions']) {
  let declared: Set<string> | undefined
  return createMiddleware<AppEnv>(async function idempotency(c, next) {
    const raw = c.req.header('idempotency-key')
    if (raw === undefined) return next()
    declared ??= new Set(
      definitions().flatMap((d) => (d.type === 'route' && declaresIdempotencyKey(d.route) ? [honoRoute(d.route.method, prefix, d.route.path)] : []))
    )
    const routes = matchedRoutes(c)
    if (!routes.some((r) => r.method === c.req.method && declared?.has(`${r.method} ${r.path}`))) return next()
    return idempotent(c, next, raw)
  })
}

async function idempotent(c: Context<AppEnv>, next: Next, raw: string): Promise<Response | undefined> {
  const key = checkedKey(raw)
  const tenantId = c.get('tenant').id
  // The tenant's shard: its keys live with its other rows (and move with them).
  const db = c.var.db
  const keyHash = await sha256Hex(key)
  const text = await c.req.raw.clone().text()
  // A dry run (`dry_run: true`, issue 25) writes nothing, so it claims no key either; its answer is computed afresh.
  if (isDryRun(text)) {
    await next()
    return undefined
  }
  const fingerprint = await requestFingerprint(c.req.method, c.req.url, c.get('key').id, text)
  const claim = newId('idc', 16)
  const row = await claimIdempotencyKey(db, { tenantId, keyHash, fingerprint, claim, now: Date.now() })
  const at: SealedAt = { column: 'idempotency_keys.response', tenantId, rowId: keyHash }
  if (row.claim !== claim) {
    if (row.fingerprint !== fingerprint) {
      throw new ApiError(
        422,
        'idempotency_key_reused',
        'This Idempotency-Key was used for a different request (another body, path or API key) within 24 hours; use a new key for a new request'
      )
    }
    if (row.status === null || row.response === null) {
      throw new ApiError(
        409,
        'idempotency_key_in_progress',
        'The first request with this Idempotency-Key is still running; retry shortly',
        IN_PROGRESS_RETRY_AFTER_S
      )
    }
    return replay(row.status, KeptAnswer.parse(JSON.parse(await unseal(keyring(c.env), at, row.response))))
  }
  // The route and the keeping of its answer run as one piece of background work too, so a client that hangs up
  // (the case the key exists for) does not cancel the keeping.
  const work = next().then(() => settle(c.env, { db, tenantId, keyHash, claim, at }, c.res))
  try {
    c.executionCtx.waitUntil(work.catch(() => undefined))
  } catch {
    // No execution context (a bare app.request in a unit test): the await below is enough.
  }
  await work
  return undefined
}
