/**
 * Hono environment: the Worker bindings (generated into worker-configuration.d.ts) and per-request variables, with
 * the shapes of those variables that nothing lower declares (the lowest layer: everything may import it).
 */
import type { drizzle } from 'drizzle-orm/d1'
import type * as schema from '../schema/d1'
import type { AuditOutcome, KeyScope, tenants } from '../schema/d1'

/** A Drizzle handle over one D1 database (the directory or a shard, worker/db/shards.ts); every query in worker/db takes one. */
export type Db = ReturnType<typeof drizzle<typeof schema>>

/** What one API key may do (docs/agent-safety.md); the rules over it are safety/grant.ts, reading it db/api-keys.ts. */
export type KeyGrant = {
  id: string
  label: string | null
  scope: KeyScope
  /** null: every account of the tenant. */
  accounts: string[] | null
  expiresAt: number | null
  replyWindowS: number
  approval: boolean
}

/** What a route tells the audit middleware about the action it handled; never a message text (safety/audit-note.ts). */
export type AuditNote = {
  /** The route template the scope check matched (`POST /v1/messages/{id}/approve`). */
  route?: string
  accountId?: string | null
  contactId?: string | null
  messageId?: string | null
  /** Overrides `accepted` for a success: `approved` or `rejected`. */
  outcome?: AuditOutcome
  /** A note on a success, such as `awaiting_approval` for a held send. */
  code?: string
}

/**
 * One limit as a request's `RateLimit` headers state it (lib/rate-limit-state.ts): quota `q` per window `w` seconds,
 * `r` left, `t` seconds until more.
 */
export type RateLimitState = { policy: string; quota: number; windowS: number; remaining: number; resetS: number }

/** Which of the spec's two error body shapes a route family answers with (spec part 7; errors.ts renders them). */
export type ErrorFamily = 'messaging' | 'status'

export type AppEnv = {
  Bindings: Env
  Variables: {
    /** Which of the spec's two error body shapes this route family answers with (spec part 7). */
    errorFamily: ErrorFamily
    /** The authenticated tenant, set by the API-key middleware. */
    tenant: typeof tenants.$inferSelect
    /**
     * The tenant's shard (worker/db/shards.ts), set with the tenant: every query of the tenant's own rows runs on it.
     * What is looked up across tenants (keys, tenants, relays, page-inbox apps) is the directory's (`directory(env)`).
     */
    db: Db
    /** The API key's reference (a hash prefix) for the per-key rate limit; unset for in-process MCP calls. */
    apiKeyRef: string
    /** How many live keys the key's tenant had when the key was looked up (cached like the key); unset for MCP. */
    tenantKeys: number
    /** What the caller's key may do, set with the tenant. */
    key: KeyGrant
    /** The MCP tool a vouched in-process request stands for (audit log). */
    tool: string
    /** What a route learned about the action (account, contact, message) for its audit entry. */
    audit: AuditNote
    /** The limits checked for this request, for its RateLimit-Policy / RateLimit headers. */
    rateLimits: RateLimitState[]
  }
}
