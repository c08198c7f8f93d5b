/**
 * The key decision of every REST operation (docs/agent-safety.md): for each method and path template (relative to
 * /v1, parameters in braces, as in OpenAPI and the MCP tool table), the narrowest key that may call it and where the
 * account it touches comes from. The first matching rule decides; HEAD is decided as GET (Hono answers HEAD with
 * the GET route). Resources are named one by one; the channel and webhook families are decided by one rule each, so
 * a new channel's routes need no edit here. A request no route answers, or a route no rule covers, is refused to
 * every key below the owner, and the table test (test/worker/safety/key-matrix.test.ts) fails until a new route
 * gets a decision. A decision is a table lookup: it costs no storage read.
 */
import type { KeyScope } from '../../schema/d1'
import { isOwnerGrant, scopeCovers, type KeyGrant } from './grant'

/** `owner`: a full key with no account list, no approval and no expiry (grant.ts isOwnerGrant); above `full`. */
export type Needs = KeyScope | 'owner'

/**
 * Where the account a call touches comes from, for a key limited to some accounts:
 * - `listed`: the answer covers only the key's accounts (lists, waits, usage, the audit log).
 * - `named`: the request names it (path `{phoneNumber}` or `{accountId}`, the custom channel's path), or the route resolves the only
 *   one (a send without `account_id`, SMS without `phone_number`) and checks it.
 * - `resource`: the path names a stored item (a message, a media item, the connected page) and the route checks
 *   that item's own account.
 * - `tenant`: the call concerns every account of the tenant, so a key with an account list is refused.
 * - `none`: the call touches no account's data (the event catalog).
 * - Wherever the rule, an account the request names in its query (`account_id`, `phone_number`) or JSON body
 *   (`account_id`, `phone_number`) must be one the key lists.
 */
export type AccountSource = 'listed' | 'named' | 'resource' | 'tenant' | 'none'

export type ScopeRule = {
  /** An HTTP method, or `*` for any. */
  method: string
  /** A template (`/messages/{id}`) or a family (`/channels/**`: the path and everything under it). */
  path: string
  /** The narrowest key allowed to call it. */
  needs: Needs
  accounts: AccountSource
  /** Why, for the refusal message and the docs. */
  what: string
}

export const SCOPE_RULES: readonly ScopeRule[] = [
  { method: 'GET', path: '/accounts', needs: 'read', accounts: 'listed', what: 'listing accounts' },
  { method: 'GET', path: '/usage', needs: 'read', accounts: 'listed', what: 'reading usage' },
  { method: 'GET', path: '/messages', needs: 'read', accounts: 'listed', what: 'listing messages' },
  { method: 'GET', path: '/messages/wait', needs: 'read', accounts: 'listed', what: 'waiting for messages' },
  { method: 'GET', path: '/messages/archive', needs: 'read', accounts: 'listed', what: 'reading archived messages' },
  { method: 'GET', path: '/messages/{id}', needs: 'read', accounts: 'resource', what: 'reading a message' },
  // A reply key may send, but only to people who wrote within its window (checked in routes/messages.ts).
  { method: 'POST', path: '/messages', needs: 'reply', accounts: 'named', what: 'sending a message' },
  // Issue 25. A dry run is decided as the send it checks; reactions, read marks and typing act in a chat like a send
  // (a reply key within its window, checked in messaging/actions.ts); a lookup reads, for an account the key may use.
  { method: 'POST', path: '/messages/check', needs: 'reply', accounts: 'named', what: 'checking a send' },
  { method: 'POST', path: '/messages/{id}/reactions', needs: 'reply', accounts: 'resource', what: 'reacting to a message' },
  { method: 'DELETE', path: '/messages/{id}/reactions', needs: 'reply', accounts: 'resource', what: 'removing a reaction' },
  { method: 'POST', path: '/messages/{id}/read', needs: 'reply', accounts: 'resource', what: 'marking a message read' },
  { method: 'POST', path: '/accounts/{accountId}/typing', needs: 'reply', accounts: 'named', what: 'showing typing' },
  { method: 'GET', path: '/accounts/{accountId}/lookup', needs: 'read', accounts: 'named', what: 'looking a number up' },
  // Approval means the owner: no agent key decides a held message, whatever it may otherwise do.
  { method: 'POST', path: '/messages/{id}/approve', needs: 'owner', accounts: 'resource', what: 'approving a held message' },
  { method: 'POST', path: '/messages/{id}/reject', needs: 'owner', accounts: 'resource', what: 'rejecting a held message' },
  { method: 'GET', path: '/audit', needs: 'read', accounts: 'listed', what: 'reading the audit log' },
  { method: '*', path: '/keys/**', needs: 'owner', accounts: 'tenant', what: 'managing API keys' },
  { method: 'GET', path: '/media/**', needs: 'read', accounts: 'resource', what: 'reading media' },
  { method: 'GET', path: '/webhooks/events', needs: 'read', accounts: 'none', what: 'listing webhook events' },
  // A signing secret is a credential, and subscriptions receive every account's events (approval links among them).
  { method: 'GET', path: '/webhooks/{webhookId}/signing-secret', needs: 'owner', accounts: 'tenant', what: 'reading a webhook signing secret' },
  { method: 'GET', path: '/webhooks/**', needs: 'read', accounts: 'tenant', what: 'reading webhooks' },
  { method: '*', path: '/webhooks/**', needs: 'owner', accounts: 'tenant', what: 'changing webhooks' },
  { method: 'GET', path: '/channels/meta/status', needs: 'read', accounts: 'resource', what: 'reading the page inbox' },
  { method: 'GET', path: '/channels/meta/**', needs: 'read', accounts: 'tenant', what: 'listing the pages to pick from' },
  { method: 'GET', path: '/channels/**', needs: 'read', accounts: 'named', what: 'reading a channel connection' },
  // Connecting or changing a channel decides where messages come from and go to, and a push is an inbound message:
  // an agent that could do either could fake a first contact and skip approval and the new-contact rules.
  {
    method: '*',
    path: '/channels/**',
    needs: 'owner',
    accounts: 'named',
    what: 'connecting, changing or disconnecting a channel, or pushing its inbound messages',
  },
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

/** The rule deciding `method template` (HEAD as GET), or undefined when the table has none. */
export function scopeRuleFor(method: string, template: string): ScopeRule | undefined {
  const m = method.toUpperCase() === 'HEAD' ? 'GET' : method.toUpperCase()
  return SCOPE_RULES.find((r) => (r.method === '*' || r.method === m) && templateMatches(r.path, template))
}

/** Keys named in a refusal: which keys would be allowed. */
export function scopesAllowing(needs: Needs): string {
  if (needs === 'read') return 'any key'
  if (needs === 'reply') return 'a reply or full key'
  if (needs === 'full') return 'a full key'
  return 'the owner’s key (full, every account, no approval, no expiry)'
}

/** Why a key may not call a route, before any account the request names is looked at; null when it may. */
export type GrantRefusal = { code: 'key_scope'; needs: Needs; what: string } | { code: 'key_account'; what: string }

/**
 * The table's decision for one key and one route (`rule` undefined: no route, or none the table covers). The owner
 * passes everything; a key with an account list may not call a tenant-wide route; then the scope.
 */
export function grantRefusal(grant: KeyGrant, rule: ScopeRule | undefined, route: string): GrantRefusal | null {
  if (isOwnerGrant(grant)) return null
  if (!rule) return { code: 'key_scope', needs: 'owner', what: `${route}: no such operation` }
  if (grant.accounts !== null && rule.accounts === 'tenant') return { code: 'key_account', what: rule.what }
  const covers = rule.needs !== 'owner' && scopeCovers(grant.scope, rule.needs)
  return covers ? null : { code: 'key_scope', needs: rule.needs, what: rule.what }
}
