/**
 * The scope decision of every REST operation, keyed by method and path template (relative to /v1, parameters in
 * braces, as in OpenAPI and the MCP tool table). The first matching rule decides. Resources are named one by one;
 * the channel and webhook families are decided by one rule each (GET reads, anything else changes), so a new
 * channel's routes need no edit here. A route no rule matches is refused to every key but a full one, and the
 * table test (test/worker/safety/scopes.test.ts) fails until it gets a decision.
 */
import type { KeyScope } from '../../schema/d1'

export type ScopeRule = {
  /** An HTTP method, or `*` for any. */
  method: string
  /** A template (`/messages/{id}`) or a family (`/channels/**`: the path and everything under it). */
  path: string
  /** The narrowest scope allowed to call it. */
  needs: KeyScope
  /** Why, for the refusal message and the docs. */
  what: string
}

export const SCOPE_RULES: readonly ScopeRule[] = [
  { method: 'GET', path: '/accounts', needs: 'read', what: 'listing accounts' },
  { method: 'GET', path: '/usage', needs: 'read', what: 'reading usage' },
  { method: 'GET', path: '/messages', needs: 'read', what: 'listing messages' },
  { method: 'GET', path: '/messages/wait', needs: 'read', what: 'waiting for messages' },
  { method: 'GET', path: '/messages/archive', needs: 'read', what: 'reading archived messages' },
  { method: 'GET', path: '/messages/{id}', needs: 'read', what: 'reading a message' },
  // A reply key may send, but only to people who wrote within its window (checked in routes/messages.ts).
  { method: 'POST', path: '/messages', needs: 'reply', what: 'sending a message' },
  { method: 'POST', path: '/messages/{id}/approve', needs: 'full', what: 'approving a held message' },
  { method: 'POST', path: '/messages/{id}/reject', needs: 'full', what: 'rejecting a held message' },
  { method: 'GET', path: '/audit', needs: 'read', what: 'reading the audit log' },
  { method: '*', path: '/keys/**', needs: 'full', what: 'managing API keys' },
  { method: 'GET', path: '/media/**', needs: 'read', what: 'reading media' },
  // Reading a signing secret hands out a credential: a full key's business.
  { method: 'GET', path: '/webhooks/{webhookId}/signing-secret', needs: 'full', what: 'reading a webhook signing secret' },
  { method: 'GET', path: '/webhooks/**', needs: 'read', what: 'reading webhooks' },
  { method: '*', path: '/webhooks/**', needs: 'full', what: 'changing webhooks' },
  { method: 'GET', path: '/channels/**', needs: 'read', what: 'reading a channel connection' },
  { method: '*', path: '/channels/**', needs: 'full', what: 'connecting, changing or disconnecting a channel' },
]

/** Hono's `:name` (and `:name{regex}`) to the `{name}` of OpenAPI and the tool table. */
export function templateOf(honoPath: string): string {
  return honoPath.replace(/:(\w+)(\{[^}]*\})?/g, '{$1}')
}

function templateMatches(rule: string, template: string): boolean {
  if (rule.endsWith('/**')) {
    const base = rule.slice(0, -3)
    return template === base || template.startsWith(`${base}/`)
  }
  return rule === template
}

/** The rule deciding `method template`, or undefined when the table has none. */
export function scopeRuleFor(method: string, template: string): ScopeRule | undefined {
  const m = method.toUpperCase()
  return SCOPE_RULES.find((r) => (r.method === '*' || r.method === m) && templateMatches(r.path, template))
}

/** Scopes named in a refusal: which keys would be allowed. */
export function scopesAllowing(needs: KeyScope): string {
  return needs === 'read' ? 'any key' : needs === 'reply' ? 'a reply or full key' : 'a full key'
}
