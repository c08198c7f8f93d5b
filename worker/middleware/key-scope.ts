/**
 * Holds every /v1 call to its key's grant (docs/agent-safety.md) with the decision table (worker/safety/scopes.ts):
 * expiry; every account the request names (query `account_id`/`phone_number`, JSON body `account_id`/
 * `phone_number`, the path's `{phoneNumber}` or `{accountId}`, or the custom channel's path); the route's rule, with HEAD decided as
 * GET and a request that no route answers refused below the owner; a tenant-wide route refused to a key with an
 * account list; the scope. The route is the one Hono itself runs for the request (its matched routes), so the check
 * and the handler never disagree about which operation this is. Routes that read an item (a message, a media item,
 * the connected page) or resolve the only account check that account with `checkAccount`. Refusals are 403 with
 * `key_expired`, `key_scope` or `key_account` in the route family's error shape, and the audit trail records them.
 */
import type { Context } from 'hono'
import { createMiddleware } from 'hono/factory'
import { matchedRoutes } from 'hono/route'
import { tryDecodeURIComponent } from 'hono/utils/url'
import { CUSTOM_ACCOUNT_ID } from '../channels/custom/config'
import type { AppEnv } from '../env'
import { ApiError } from '../errors'
import type { AuditNote } from '../safety/audit-note'
import { isExpired, isOwnerGrant } from '../safety/grant'
import { checkAccount, scopeRefusal } from '../safety/key-refusals'
import { grantRefusal, scopeRuleFor, templateOf } from '../safety/scopes'

/** The clock the expiry check reads; tests replace it. */
export const keyClock = { now: () => Date.now() }

/** Query parameters (and JSON body fields, read below) that name an account. */
const NAMING_FIELDS = ['account_id', 'phone_number'] as const
/** The media types Hono's JSON validator reads (hono/validator): any other body never reaches a route as JSON. */
const JSON_MEDIA_TYPE = /^application\/([\w.-]+\+)?json$/i

export type RouteMatch = { template: string; params: Record<string, string> }

const paramPatterns = new Map<string, { regex: RegExp; names: string[] }>()

/** The parameters of `path` under a Hono route path (`/v1/x/:id`, `:id{regex}`), decoded as Hono decodes them. */
function paramsOf(honoPath: string, path: string): Record<string, string> {
  let pattern = paramPatterns.get(honoPath)
  if (!pattern) {
    const names: string[] = []
    const source = honoPath
      .split('/')
      .map((segment) => {
        const param = /^:(\w+)(?:\{(.+)\})?$/.exec(segment)
        if (!param) return segment.replace(/[.+?^$()|[\]{}\\*]/g, '\\$&')
        names.push(param[1]!)
        return `(${param[2] ?? '[^/]+'})`
      })
      .join('/')
    pattern = { regex: new RegExp(`^${source}/?$`), names }
    paramPatterns.set(honoPath, pattern)
  }
  const hit = pattern.regex.exec(path)
  const params: Record<string, string> = {}
  pattern.names.forEach((name, i) => {
    const raw = hit?.[i + 1]
    if (raw !== undefined) params[name] = tryDecodeURIComponent(raw)
  })
  return params
}

/** The operation Hono runs for this request (relative to `prefix`), or undefined when no route answers it. */
function routeRun(c: Context<AppEnv>, prefix: string): RouteMatch | undefined {
  const route = matchedRoutes(c)
    .slice(c.req.routeIndex + 1)
    .find((r) => r.method !== 'ALL' && !r.path.includes('*') && r.path.startsWith(prefix))
  if (!route) return undefined
  return { template: templateOf(route.path.slice(prefix.length) || '/'), params: paramsOf(route.path, c.req.path) }
}

/** Adds what a route learned (account, contact, message, outcome) to its audit entry. */
export function noteAudit(c: Context<AppEnv>, note: AuditNote): void {
  c.set('audit', { ...c.get('audit'), ...note })
}

/** The account a route's path names: `{phoneNumber}`, `{accountId}` (an account's actions), or the custom channel's one account. */
function pathAccount(route: RouteMatch): string | undefined {
  return (
    route.params.phoneNumber ??
    route.params.accountId ??
    (route.template === '/channels/custom' || route.template.startsWith('/channels/custom/') ? CUSTOM_ACCOUNT_ID : undefined)
  )
}

/** Every account the query and the JSON body name; read only for keys with an account list. */
async function requestAccounts(c: Context<AppEnv>): Promise<string[]> {
  const named = NAMING_FIELDS.flatMap((field) => c.req.queries(field) ?? [])
  const mediaType = c.req.header('content-type')?.split(';')[0]?.trim() ?? ''
  if (c.req.method !== 'GET' && c.req.method !== 'HEAD' && JSON_MEDIA_TYPE.test(mediaType)) {
    // Hono keeps the parsed body, so the route's validator reads this same value.
    const body: unknown = await c.req.json().catch(() => undefined)
    if (typeof body === 'object' && body !== null) {
      if ('account_id' in body && typeof body.account_id === 'string') named.push(body.account_id)
      if ('phone_number' in body && typeof body.phone_number === 'string') named.push(body.phone_number)
    }
  }
  return named
}

/** `prefix` is the mount point of the routes (`/v1`). */
export function keyScope(prefix: string) {
  return createMiddleware<AppEnv>(async function keyScope(c, next) {
    const grant = c.get('key')
    const expired = isExpired(grant, keyClock.now())
    // An owner's read that is let through is neither decided here nor audited (middleware/audit.ts): its route is
    // not looked up, which is most of this check's cost on the commonest call.
    const reads = c.req.method === 'GET' || c.req.method === 'HEAD'
    if (reads && !expired && isOwnerGrant(grant)) return next()
    const route = routeRun(c, prefix)
    // HEAD is answered by the GET route, and is recorded and decided as what it is: a read of that route.
    if (route) c.set('audit', { route: `${c.req.method} ${prefix}${route.template}`, accountId: pathAccount(route) ?? c.req.query('account_id') })
    if (expired) {
      throw new ApiError(403, 'key_expired', `This key expired at ${new Date(grant.expiresAt!).toISOString()}; mint a new one with the owner’s key`)
    }
    if (isOwnerGrant(grant)) return next()
    if (grant.accounts !== null) for (const account of await requestAccounts(c)) checkAccount(grant, account)
    const where = route ? `${c.req.method} ${prefix}${route.template}` : `${c.req.method} ${c.req.path}`
    if (route && grant.accounts !== null) checkAccount(grant, pathAccount(route))
    const refusal = grantRefusal(grant, route && scopeRuleFor(c.req.method, route.template), where)
    if (refusal) throw scopeRefusal(grant, refusal)
    await next()
  })
}
