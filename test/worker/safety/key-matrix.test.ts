/**
 * Every route of the app × every kind of key × every method (HEAD and OPTIONS included) against the key decision
 * table (worker/safety/scopes.ts, docs/agent-safety.md). The routes come from the app's own route list and its OpenAPI
 * document; a route without a decision fails here. Each cell's answer must be the table's decision: handed on to the
 * route, or refused with the documented code in the route family's error shape. Account B's number, message, media item and a webhook are real, so a route that checks
 * an item's own account is exercised, not only the middleware.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import { errorFamilyFor, v1 } from '../../../worker/app'
import { keyClock } from '../../../worker/middleware/key-scope'
import { scopeCovers } from '../../../worker/safety/grant'
import { scopeRuleFor, templateOf, type ScopeRule } from '../../../worker/safety/scopes'
import { call, newTenant, receiverChannel } from '../helpers'
import { addAccount, ingestVia } from '../state'
import { createWebhook } from '../webhook-helpers'
import { adminKey, storedImage } from './helpers'

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const
type Method = (typeof METHODS)[number]

/** The account the limited keys may use (it does not exist) and the one every request touches. */
const A = '+15550001111'
const B = '+15550002222'
const HOUR_MS = 3600_000
/** A valid send naming no account: the route resolves the tenant's only connected one (B). */
const SEND = { to: { phone: '+447700900123' }, text: 'hello' }

const KINDS = {
  owner: null,
  full_approval: { approval: true, label: 'approval agent' },
  full_limited: { accounts: [A], label: 'limited agent' },
  full_expiring: { expires_at: new Date(Date.now() + 30 * 24 * HOUR_MS).toISOString(), label: 'expiring agent' },
  reply: { scope: 'reply', label: 'replier' },
  read: { scope: 'read', label: 'reader' },
  read_limited: { scope: 'read', accounts: [A], label: 'limited reader' },
  expired: { expires_at: new Date(Date.now() + HOUR_MS).toISOString(), label: 'expired agent' },
} as const
type Kind = keyof typeof KINDS

const SCOPE_OF: Record<Kind, 'read' | 'reply' | 'full'> = {
  owner: 'full',
  full_approval: 'full',
  full_limited: 'full',
  full_expiring: 'full',
  reply: 'reply',
  read: 'read',
  read_limited: 'read',
  expired: 'full',
}
const LIMITED: ReadonlySet<Kind> = new Set(['full_limited', 'read_limited'])

type Outcome = 'pass' | 'key_scope' | 'key_account' | 'key_expired'

/** How each refusal reads in either error family (the status family carries the code only in its sentence). */
const REFUSAL_TEXT: Record<Exclude<Outcome, 'pass'>, RegExp> = {
  key_scope: /may not do this/,
  key_account: /may not use account|every account of the tenant/,
  key_expired: /expired at/,
}

/**
 * The refusal a 403 body carries, checked against its route family's shape (spec §7): messaging routes name the code,
 * the others answer `{success: false, error, error_code: 403}` with the code's sentence.
 */
function outcomeOf(status: number, text: string, path: string): Outcome {
  if (status !== 403) return 'pass'
  const refusal = Object.entries(REFUSAL_TEXT).find(([, pattern]) => pattern.test(text))?.[0] as Outcome | undefined
  const json: unknown = JSON.parse(text)
  const shaped =
    errorFamilyFor(path) === 'messaging'
      ? typeof json === 'object' && json !== null && 'error_code' in json && 'error' in json && Object.keys(json).length === 2
      : typeof json === 'object' && json !== null && 'success' in json && json.success === false && 'error_code' in json && json.error_code === 403
  if (!shaped) return 'pass'
  const code = typeof json === 'object' && json !== null && 'error_code' in json && typeof json.error_code === 'string' ? json.error_code : undefined
  if (code) return code in REFUSAL_TEXT ? (code as Outcome) : 'pass'
  return refusal ?? 'pass'
}

/** Every `template → methods` the REST app answers with a key (relative to /v1), from its own route list. */
function appRoutes(): Map<string, Set<string>> {
  const routes = new Map<string, Set<string>>()
  for (const r of v1.routes) {
    if (r.method === 'ALL' || r.path.includes('*') || r.path === '/openapi.json') continue
    const template = templateOf(r.path)
    routes.set(template, (routes.get(template) ?? new Set()).add(r.method))
  }
  return routes
}

/**
 * The route Hono runs for `method path` (relative to /v1), as its own router decides: HEAD is answered by the GET
 * route and nothing answers OPTIONS. A path can reach another template than the one it was made from
 * (`DELETE /channels/beta/connect` is `DELETE /channels/beta/{phoneNumber}`).
 */
function routeRun(method: Method, path: string): string | undefined {
  const [handlers] = v1.router.match(method === 'HEAD' ? 'GET' : method, path)
  const route = handlers.map(([[, r]]) => r).find((r) => r.method !== 'ALL' && !r.path.includes('*'))
  return route ? templateOf(route.path) : undefined
}

/** Whether the path itself names an account (a number, or the custom channel's one account). */
function pathNamesAccount(template: string): boolean {
  return template.includes('{phoneNumber}') || template.includes('{accountId}') || template === '/channels/custom' || template.startsWith('/channels/custom/')
}

/**
 * The documented decision for one cell. `names`: the request also names account B in its query and body. The order
 * is the middleware's: expiry, the owner, accounts named in query or body, no route, the path's account, a
 * tenant-wide route, the scope; then the route checks the account of the item it reads (or resolves).
 */
function expected(kind: Kind, rule: ScopeRule | undefined, template: string, names: boolean, literal = false): Outcome {
  if (kind === 'expired') return 'key_expired'
  if (kind === 'owner') return 'pass'
  const limited = LIMITED.has(kind)
  if (limited && names) return 'key_account'
  if (!rule) return 'key_scope'
  if (limited && (pathNamesAccount(template) || rule.accounts === 'tenant')) return 'key_account'
  const covers = rule.needs !== 'owner' && scopeCovers(SCOPE_OF[kind], rule.needs)
  if (!covers) return 'key_scope'
  if (!limited || rule.accounts === 'listed' || rule.accounts === 'none') return 'pass'
  // A literal segment read as an item's id (`GET /messages/check` is the message "check"): no such item, nothing to hold the key to.
  if (literal && rule.accounts === 'resource') return 'pass'
  // `named` without a name resolves B (the tenant's only account); `resource` reads B's own item.
  return 'key_account'
}

afterEach(() => {
  keyClock.now = () => Date.now()
})

async function seed() {
  const t = await newTenant()
  const ref = await addAccount(t.tenantId, { id: B, channel: 'sms' })
  const inbound = await ingestVia(ref, { phone: '+447700900123' }, 'hello from B')
  if (!inbound.stored) throw new Error('the seed message was not stored')
  const mediaId = await storedImage(t.tenantId, B, 'seed-media')
  await createWebhook(t, { url: receiverChannel('matrix').url, subscribed_to: ['message.received'] })
  const spare = await adminKey(t.tenantId, { scope: 'read', label: 'spare' })
  const keys = {} as Record<Kind, string>
  for (const kind of Object.keys(KINDS) as Kind[]) {
    const fields = KINDS[kind]
    keys[kind] = fields ? (await adminKey(t.tenantId, fields)).key : t.key
  }
  const params: Record<string, string> = { phoneNumber: B, accountId: B, id: inbound.messageId, mediaId, webhookId: '0', keyId: spare.id }
  return { keys, params }
}

type Cell = { kind: Kind; method: Method; template: string; names: boolean; want: Outcome; got: Outcome; status: number }

describe('the key decision table against every route, key and method', () => {
  it('has a decision for every route the app answers', () => {
    const missing: string[] = []
    for (const [template, methods] of appRoutes()) for (const m of methods) if (!scopeRuleFor(m, template)) missing.push(`${m} ${template}`)
    // The OpenAPI document lists the same operations (a route added to it alone must get a decision too).
    const doc = v1.getOpenAPI31Document({ openapi: '3.1.0', info: { title: 't', version: '1' } })
    for (const [path, item] of Object.entries(doc.paths ?? {}))
      for (const m of ['get', 'post', 'put', 'patch', 'delete'] as const)
        if (item[m] && path !== '/openapi.json' && !scopeRuleFor(m, path.length > 1 ? path.replace(/\/$/, '') : path)) missing.push(`${m} ${path}`)
    expect(appRoutes().size).toBeGreaterThan(30)
    expect(missing, 'routes without a decision (add a rule to worker/safety/scopes.ts)').toEqual([])
  })

  let seeded: Awaited<ReturnType<typeof seed>>
  beforeAll(async () => {
    seeded = await seed()
  })

  // The owner goes last: its calls change things (a revoked spare key, a removed webhook) the others must still see.
  const order: Kind[] = [...(Object.keys(KINDS) as Kind[]).filter((k) => k !== 'owner'), 'owner']
  for (const kind of order) {
    it(`answers every cell of a ${kind} key as the table decides, HEAD exactly as GET`, { timeout: 60_000 }, async () => {
      const { keys, params } = seeded
      keyClock.now = kind === 'expired' ? () => Date.now() + 2 * HOUR_MS : () => Date.now()
      const cells: Cell[] = []
      for (const names of LIMITED.has(kind) ? [true, false] : [true]) {
        // Templates side by side (each one's methods in order, GET before HEAD): the table is large.
        await Promise.all(
          [...appRoutes().keys()].map(async (template) => {
            const concrete = template.replace(/\{(\w+)\}/g, (_, n: string) => encodeURIComponent(params[n] ?? 'x'))
            const query = names ? `?account_id=${encodeURIComponent(B)}&phone_number=${encodeURIComponent(B)}&timeout_s=0` : '?timeout_s=0'
            let get: Cell | undefined
            for (const method of METHODS) {
              const run = routeRun(method, concrete)
              // Without names only the routes matter: a request no route answers is decided alike either way.
              if (!names && run === undefined) continue
              const rule = run === undefined ? undefined : scopeRuleFor(method, run)
              const hasBody = !['GET', 'HEAD', 'OPTIONS'].includes(method)
              const res = await call(`/v1${concrete}${query}`, {
                method,
                key: keys[kind],
                json: hasBody ? (names ? { account_id: B, phone_number: B } : SEND) : undefined,
              })
              const text = /json|text|html/.test(res.headers.get('content-type') ?? '') ? await res.text() : (await res.arrayBuffer(), '')
              const want = expected(kind, rule, run ?? template, names, run !== undefined && run !== template)
              // A HEAD answer has no body: a 403 is read as the refusal GET got (HEAD must be decided exactly as GET).
              const got =
                method === 'HEAD' ? (res.status !== 403 ? 'pass' : get?.status === 403 ? get.got : 'key_scope') : outcomeOf(res.status, text, `/v1${concrete}`)
              const cell = { kind, method, template: run === undefined ? `${template} (no route)` : run, names, want, got, status: res.status }
              if (method === 'GET') get = cell
              cells.push(cell)
            }
          })
        )
      }
      const wrong = cells
        .filter((c) => c.want !== c.got)
        .map((c) => `${c.kind}${c.names ? '' : ' (no names)'} ${c.method} ${c.template}: want ${c.want}, got ${c.got} (${c.status})`)
      expect(wrong).toEqual([])
    })
  }
})
