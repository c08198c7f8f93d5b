/** Reads the Worker's configuration (vars and secrets) into typed values, with the defaults documented in the README. */
import type { UrlPolicy } from './lib/public-url'

export function allowLoopbackUrls(env: Env): boolean {
  return ['true', '1', 'yes'].includes((env.ALLOW_LOOPBACK_URLS ?? '').toLowerCase())
}

/** The public origin: PUBLIC_BASE_URL when set, else the origin the request came in on. */
export function publicOrigin(env: Env, requestUrl?: string): string {
  if (env.PUBLIC_BASE_URL) return env.PUBLIC_BASE_URL.replace(/\/+$/, '')
  return requestUrl ? new URL(requestUrl).origin : ''
}

export function urlPolicy(env: Env, requestUrl?: string): UrlPolicy {
  const hosts = new Set<string>()
  for (const u of [env.PUBLIC_BASE_URL, requestUrl]) {
    if (!u) continue
    try {
      hosts.add(new URL(u).hostname)
    } catch {
      // An unparsable PUBLIC_BASE_URL adds no host; the README says it must be an absolute URL.
    }
  }
  return { allowLoopback: allowLoopbackUrls(env), ownHosts: [...hosts] }
}

export function encryptionKey(env: Env): string {
  if (!env.ENCRYPTION_KEY) throw new Error('ENCRYPTION_KEY is not set (wrangler secret put ENCRYPTION_KEY)')
  return env.ENCRYPTION_KEY
}

export const DEFAULT_DELIVERY_TIMEOUT_MS = 10_000

/** How long a receiver (custom channel webhook, webhook subscriber) gets to answer. */
export function deliveryTimeoutMs(env: Env): number {
  const ms = Number(env.DELIVERY_TIMEOUT_MS)
  return Number.isFinite(ms) && ms > 0 ? ms : DEFAULT_DELIVERY_TIMEOUT_MS
}

/**
 * Origins a browser-based MCP client may call /mcp from (spec: servers must check Origin against DNS rebinding):
 * the origin of PUBLIC_BASE_URL plus MCP_ALLOWED_ORIGINS (comma-separated origins, or `*` for any). Requests
 * without an Origin header (every non-browser client) are not affected.
 */
export function mcpAllowedOrigins(env: Env): { any: boolean; origins: Set<string> } {
  const origins = new Set<string>()
  let any = false
  for (const entry of [env.PUBLIC_BASE_URL, ...(env.MCP_ALLOWED_ORIGINS ?? '').split(',')]) {
    const value = entry?.trim()
    if (!value) continue
    if (value === '*') {
      any = true
      continue
    }
    try {
      origins.add(new URL(value).origin)
    } catch {
      // Not an absolute URL: it can match no Origin header, so it is skipped (the README gives the format).
    }
  }
  return { any, origins }
}
