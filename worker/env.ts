/** Hono environment: the Worker bindings (generated into worker-configuration.d.ts) and per-request variables. */
import type { Tenant } from './db/tenants'
import type { ErrorFamily } from './errors'
import type { RateLimitState } from './lib/rate-limit-state'
import type { AuditNote } from './safety/audit-note'
import type { KeyGrant } from './safety/grant'

export type AppEnv = {
  Bindings: Env
  Variables: {
    /** Which of the spec's two error body shapes this route family answers with (spec part 7). */
    errorFamily: ErrorFamily
    /** The authenticated tenant, set by the API-key middleware. */
    tenant: Tenant
    /** The API key's reference (a hash prefix) for the per-key rate limit; unset for in-process MCP calls. */
    apiKeyRef: string
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
