/**
 * Holds every /v1 call to its key's grant (docs/agent-safety.md): expiry, the scope decision of the route
 * (worker/safety/scopes.ts) and the accounts the key may use. Refusals are 403 with `key_expired`, `key_scope` or
 * `key_account` in the route family's error shape. The account named in a path (`{phoneNumber}`), the
 * `account_id` query parameter or a connect body's `phone_number` is checked here; a send's account is checked by
 * the send route once it is resolved.
 */
import type { Context } from 'hono'
import { createMiddleware } from 'hono/factory'
import type { KeyScope } from '../../schema/d1'
import { CUSTOM_ACCOUNT_ID } from '../channels/custom/config'
import type { AppEnv } from '../env'
import { ApiError } from '../errors'
import type { AuditNote } from '../safety/audit-note'
import { accountAllowed, isExpired, scopeCovers, type KeyGrant } from '../safety/grant'
import { scopeRuleFor, scopesAllowing, templateOf } from '../safety/scopes'

export type RouteEntry = { method: string; path: string }
type Matcher = { method: string; template: string; regex: RegExp; names: string[] }

/** The clock the expiry check reads; tests replace it. */
export const keyClock = { now: () => Date.now() }

function compile(routes: readonly RouteEntry[]): Matcher[] {
  const seen = new Set<string>()
  const out: Matcher[] = []
  for (const r of routes) {
    if (r.method === 'ALL' || r.path.includes('*')) continue
    const template = templateOf(r.path)
    const id = `${r.method} ${template}`
    if (seen.has(id)) continue
    seen.add(id)
    const names: string[] = []
    const source = template.replace(/[.+?^$()|[\]\\]/g, '\\$&').replace(/\{(\w+)\}/g, (_, n: string) => (names.push(n), '([^/]+)'))
    out.push({ method: r.method, template, regex: new RegExp(`^${source}/?$`), names })
  }
  // Literal paths before templated ones: /messages/wait is not the message "wait".
  return out.sort((a, b) => a.names.length - b.names.length)
}

export type RouteMatch = { template: string; params: Record<string, string> }

export function routeMatcher(routes: () => readonly RouteEntry[]) {
  let compiled: Matcher[] | undefined
  return (method: string, path: string): RouteMatch | undefined => {
    compiled ??= compile(routes())
    for (const m of compiled) {
      if (m.method !== method) continue
      const hit = m.regex.exec(path)
      if (!hit) continue
      const params: Record<string, string> = {}
      m.names.forEach((n, i) => {
        try {
          params[n] = decodeURIComponent(hit[i + 1]!)
        } catch {
          params[n] = hit[i + 1]!
        }
      })
      return { template: m.template, params }
    }
    return undefined
  }
}

export function scopeRefusal(grant: KeyGrant, needs: KeyScope | undefined, what: string): ApiError {
  const allowed = needs ? scopesAllowing(needs) : 'a full key'
  return new ApiError(403, 'key_scope', `This ${grant.scope} key may not do this (${what}); ${allowed} may`)
}

export function accountRefusal(accountId: string): ApiError {
  return new ApiError(403, 'key_account', `This key may not use account ${accountId}; a key that lists it (or any account) may`)
}

/** Adds what a route learned (account, contact, message, outcome) to its audit entry. */
export function noteAudit(c: Context<AppEnv>, note: AuditNote): void {
  c.set('audit', { ...c.get('audit'), ...note })
}

export function checkAccount(grant: KeyGrant, accountId: string | undefined | null): void {
  if (accountId && !accountAllowed(grant, accountId)) throw accountRefusal(accountId)
}

/** The account a route's path names: `{phoneNumber}`, or the custom channel's one account. */
function namedAccount(route: RouteMatch): string | undefined {
  return route.params.phoneNumber ?? (route.template === '/channels/custom' || route.template.startsWith('/channels/custom/') ? CUSTOM_ACCOUNT_ID : undefined)
}

/** `prefix` is the mount point of the routes (`/v1`); `routes` lists them relative to it. */
export function keyScope(prefix: string, routes: () => readonly RouteEntry[]) {
  const match = routeMatcher(routes)
  return createMiddleware<AppEnv>(async function keyScope(c, next) {
    const grant = c.get('key')
    const route = match(c.req.method, c.req.path.slice(prefix.length) || '/')
    if (route) c.set('audit', { route: `${c.req.method} ${prefix}${route.template}`, accountId: namedAccount(route) ?? c.req.query('account_id') })
    if (isExpired(grant, keyClock.now())) {
      throw new ApiError(403, 'key_expired', `This key expired at ${new Date(grant.expiresAt!).toISOString()}; mint a new one with a full key`)
    }
    if (!route) return next()
    const rule = scopeRuleFor(c.req.method, route.template)
    if (!rule ? grant.scope !== 'full' : !scopeCovers(grant.scope, rule.needs)) {
      throw scopeRefusal(grant, rule?.needs, rule?.what ?? `${c.req.method} ${route.template}`)
    }
    if (grant.accounts !== null) {
      checkAccount(grant, namedAccount(route) ?? c.req.query('account_id'))
      if (route.template.startsWith('/channels/') && c.req.method !== 'GET' && c.req.header('content-type')?.includes('json')) {
        const body: unknown = await c.req.json().catch(() => undefined)
        const phone = typeof body === 'object' && body !== null && 'phone_number' in body ? body.phone_number : undefined
        if (typeof phone === 'string') checkAccount(grant, phone)
      }
    }
    await next()
  })
}
