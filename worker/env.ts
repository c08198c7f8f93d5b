/** Hono environment: the Worker bindings (generated into worker-configuration.d.ts) and per-request variables. */
import type { Tenant } from './db/tenants'
import type { ErrorFamily } from './errors'

export type AppEnv = {
  Bindings: Env
  Variables: {
    /** Which of the spec's two error body shapes this route family answers with (spec part 7). */
    errorFamily: ErrorFamily
    /** The authenticated tenant, set by the API-key middleware. */
    tenant: Tenant
    /** The API key's reference (a hash prefix) for the per-key rate limit; unset for in-process MCP calls. */
    apiKeyRef: string
  }
}
