/** Reads the Worker's configuration (vars and secrets) into typed values, with the defaults documented in docs/deploy.md (Configuration). */
import { normalizeHost, type UrlPolicy } from '../common/public-url'
import { DEFAULT_KEY_ID, KEY_ID_PATTERN, type Keyring } from './lib/sealed'

export function allowLoopbackUrls(env: Env): boolean {
  return ['true', '1', 'yes'].includes((env.ALLOW_LOOPBACK_URLS ?? '').toLowerCase())
}

/** The public origin: PUBLIC_BASE_URL when set, else the origin the request came in on. */
export function publicOrigin(env: Env, requestUrl?: string): string {
  if (env.PUBLIC_BASE_URL) return env.PUBLIC_BASE_URL.replace(/\/+$/, '')
  return requestUrl ? new URL(requestUrl).origin : ''
}

/**
 * The origin signed media links are built on: MEDIA_BASE_URL when set (a separate origin, so a stranger's file never
 * shares one with the gateway's pages; docs/security.md), else the public origin.
 */
export function mediaOrigin(env: Env, requestUrl?: string): string {
  if (env.MEDIA_BASE_URL) return env.MEDIA_BASE_URL.replace(/\/+$/, '')
  return publicOrigin(env, requestUrl)
}

export function urlPolicy(env: Env, requestUrl?: string): UrlPolicy {
  const hosts = new Set<string>()
  for (const u of [env.PUBLIC_BASE_URL, env.MEDIA_BASE_URL, requestUrl]) {
    if (!u) continue
    try {
      hosts.add(new URL(u).hostname)
    } catch {
      // An unparsable PUBLIC_BASE_URL adds no host; the README says it must be an absolute URL.
    }
  }
  const internalHosts = (env.INTERNAL_URL_HOSTS ?? '').split(',').map(normalizeHost).filter(Boolean)
  return { allowLoopback: allowLoopbackUrls(env), ownHosts: [...hosts], internalHosts }
}

/**
 * The key behind signed links and tokens (media links, connect and approval pages, SMS status callbacks):
 * ENCRYPTION_KEY, or the current sealing key when only the keyring is configured. Sealed values use `keyring`.
 */
export function encryptionKey(env: Env): string {
  if (env.ENCRYPTION_KEY) return env.ENCRYPTION_KEY
  const ring = keyring(env)
  const key = ring.keys.get(ring.currentId)
  if (key === undefined) throw new Error('ENCRYPTION_KEY is not set (wrangler secret put ENCRYPTION_KEY)')
  return key
}

const keyrings = new Map<string, Keyring>()

/**
 * The sealing keyring (docs/security.md, Secret rotation): ENCRYPTION_KEYS is `kid:secret,kid:secret`, and
 * ENCRYPTION_KEY joins it under the id `default`, so a deployment with ENCRYPTION_KEY alone keeps working.
 * ENCRYPTION_KEY_ID names the key new values are sealed with; without it that is `default`, or the only key.
 * A broken configuration throws, naming the variable, rather than sealing under a key the operator did not mean.
 */
export function keyring(env: Env): Keyring {
  const single = env.ENCRYPTION_KEY ?? ''
  const list = env.ENCRYPTION_KEYS ?? ''
  const chosen = env.ENCRYPTION_KEY_ID?.trim() ?? ''
  const cacheKey = JSON.stringify([single, list, chosen])
  const cached = keyrings.get(cacheKey)
  if (cached) return cached
  const keys = new Map<string, string>()
  for (const entry of list.split(',')) {
    const item = entry.trim()
    if (!item) continue
    const colon = item.indexOf(':')
    const id = colon > 0 ? item.slice(0, colon).trim() : ''
    const secret = colon > 0 ? item.slice(colon + 1).trim() : ''
    if (!KEY_ID_PATTERN.test(id) || !secret) throw new Error('ENCRYPTION_KEYS must be kid:secret pairs separated by commas (kid: letters, digits, - and _)')
    if (keys.has(id)) throw new Error(`ENCRYPTION_KEYS names the key ${id} twice`)
    keys.set(id, secret)
  }
  if (single) {
    if (keys.has(DEFAULT_KEY_ID) && keys.get(DEFAULT_KEY_ID) !== single)
      throw new Error(`ENCRYPTION_KEYS has a key named ${DEFAULT_KEY_ID} that differs from ENCRYPTION_KEY`)
    keys.set(DEFAULT_KEY_ID, single)
  }
  if (keys.size === 0) throw new Error('ENCRYPTION_KEY is not set (wrangler secret put ENCRYPTION_KEY)')
  const currentId = chosen || (single ? DEFAULT_KEY_ID : keys.size === 1 ? [...keys.keys()][0]! : '')
  if (!currentId) throw new Error('ENCRYPTION_KEY_ID must name the key to seal with: ENCRYPTION_KEYS holds several')
  if (!keys.has(currentId)) throw new Error(`ENCRYPTION_KEY_ID is ${currentId}, which is not in ENCRYPTION_KEYS`)
  const ring: Keyring = { currentId, keys }
  keyrings.set(cacheKey, ring)
  return ring
}

export const DEFAULT_DELIVERY_TIMEOUT_MS = 10_000

/** How long a receiver (custom channel webhook, webhook subscriber) gets to answer. */
export function deliveryTimeoutMs(env: Env): number {
  return positiveMs(env.DELIVERY_TIMEOUT_MS, DEFAULT_DELIVERY_TIMEOUT_MS)
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

function positiveMs(raw: string | undefined, fallback: number): number {
  const ms = Number(raw)
  return raw && Number.isFinite(ms) && ms > 0 ? ms : fallback
}

export const DEFAULT_RELAY_LEASE_MS = 10_000
export const DEFAULT_RELAY_HEARTBEAT_MS = 3_000
export const DEFAULT_RELAY_UNASSIGNED_GRACE_MS = 30_000

/** Relay link timing (docs/deploy.md, Configuration). Tests shorten them; production keeps the defaults. */
export function relayConfig(env: Env) {
  return {
    leaseMs: positiveMs(env.RELAY_LEASE_MS, DEFAULT_RELAY_LEASE_MS),
    heartbeatMs: positiveMs(env.RELAY_HEARTBEAT_MS, DEFAULT_RELAY_HEARTBEAT_MS),
    unassignedGraceMs: positiveMs(env.RELAY_UNASSIGNED_GRACE_MS, DEFAULT_RELAY_UNASSIGNED_GRACE_MS),
  }
}

export const DEFAULT_PAIRING_CODE_WAIT_MS = 8_000
export const DEFAULT_CONNECT_PAGE_TTL_MS = 10 * 60_000

/** How long `POST /channels/alpha-web/connections` with `link_method: pairing_code` waits for the relay's code. */
export function pairingCodeWaitMs(env: Env): number {
  return positiveMs(env.ALPHA_PAIRING_CODE_WAIT_MS, DEFAULT_PAIRING_CODE_WAIT_MS)
}

/** Life of a hosted connect page link (`connect_url_expires_at`). */
export function connectPageTtlMs(env: Env): number {
  return positiveMs(env.CONNECT_PAGE_TTL_MS, DEFAULT_CONNECT_PAGE_TTL_MS)
}

/** Where the owner's passkey for alpha works, so where its helper runs (WebAuthn binds the assertion to whatsapp.com). */
export const DEFAULT_PASSKEY_HELPER_ORIGIN = 'https://web.whatsapp.com'

/**
 * Origins the alpha passkey helper may call the ceremony API from (CORS; docs/channels/alpha.md): ALPHA_PASSKEY_HELPER_ORIGINS,
 * comma-separated, or web.whatsapp.com when unset. Tests add the origin that stands in for it.
 */
export function passkeyHelperOrigins(env: Env): Set<string> {
  const origins = new Set<string>()
  for (const entry of (env.ALPHA_PASSKEY_HELPER_ORIGINS ?? '').split(',')) {
    try {
      if (entry.trim()) origins.add(new URL(entry.trim()).origin)
    } catch {
      // Not an absolute URL: it can match no Origin header.
    }
  }
  if (origins.size === 0) origins.add(DEFAULT_PASSKEY_HELPER_ORIGIN)
  return origins
}

/** Life of beta's hosted login page link (spec part 8: about 30 minutes, the relay's login window, LOGIN_WINDOW_MS). */
export const BETA_CONNECT_PAGE_TTL_MS = 30 * 60_000

export const DEFAULT_TWILIO_API_URL = 'https://api.twilio.com'
export const DEFAULT_TWILIO_MESSAGING_API_URL = 'https://messaging.twilio.com'
export const DEFAULT_SMS_GATEWAY_URL = 'https://api.sms-gate.app/3rdparty/v1'

function baseUrl(raw: string | undefined, fallback: string): string {
  return (raw?.trim() || fallback).replace(/\/+$/, '')
}

/** Twilio's REST API (2010-04-01 resources); a local fake in tests and `npm start`. */
export function twilioApiUrl(env: Env): string {
  return baseUrl(env.TWILIO_API_URL, DEFAULT_TWILIO_API_URL)
}

/**
 * Twilio's Messaging API (Services, their numbers, US A2P campaigns) lives on its own host. When only
 * TWILIO_API_URL is set (a local fake), the same server answers both.
 */
export function twilioMessagingApiUrl(env: Env): string {
  if (env.TWILIO_MESSAGING_API_URL?.trim()) return baseUrl(env.TWILIO_MESSAGING_API_URL, DEFAULT_TWILIO_MESSAGING_API_URL)
  return env.TWILIO_API_URL?.trim() ? twilioApiUrl(env) : DEFAULT_TWILIO_MESSAGING_API_URL
}

/** SMS Gateway for Android's cloud (or private-server) API root, with its `/3rdparty/v1` prefix. */
export function smsGatewayUrl(env: Env): string {
  return baseUrl(env.SMS_GATEWAY_URL, DEFAULT_SMS_GATEWAY_URL)
}

export const DEFAULT_GRAPH_API_URL = 'https://graph.facebook.com'
export const DEFAULT_GRAPH_DIALOG_URL = 'https://www.facebook.com'
export const DEFAULT_GRAPH_API_VERSION = 'v25.0'

/** Where the page inbox reaches the Graph API and its login dialog (upstreams 5); a local fake stands in for tests. */
export function graphConfig(env: Env): { apiUrl: string; dialogUrl: string; version: string } {
  const base = (raw: string | undefined, fallback: string) => (raw?.trim() || fallback).replace(/\/+$/, '')
  return {
    apiUrl: base(env.GRAPH_API_URL, DEFAULT_GRAPH_API_URL),
    dialogUrl: base(env.GRAPH_DIALOG_URL, DEFAULT_GRAPH_DIALOG_URL),
    version: env.GRAPH_API_VERSION?.trim() || DEFAULT_GRAPH_API_VERSION,
  }
}

export const DEFAULT_MEDIA_LINK_TTL_S = 24 * 60 * 60
export const DEFAULT_MEDIA_RETENTION_DAYS = 30
/** The spec floor for the per-item cap: at least 64 MiB. */
export const MIN_MEDIA_MAX_BYTES = 64 * 1024 * 1024

/** Media store settings (docs/media.md): signed link life, retention, and the size cap per item. */
/** D1's cap on one database (Paid plan): what a shard is measured against unless SHARD_CAPACITY_BYTES says otherwise. */
export const D1_DATABASE_MAX_BYTES = 10_000_000_000

/** What one shard may hold (docs/CAPACITY.md, "When a database fills"). */
export function shardCapacityBytes(env: Env): number {
  const n = Number(env.SHARD_CAPACITY_BYTES)
  return env.SHARD_CAPACITY_BYTES && Number.isFinite(n) && n > 0 ? n : D1_DATABASE_MAX_BYTES
}

export function mediaConfig(env: Env) {
  const ttlS = Number(env.MEDIA_LINK_TTL_S)
  const days = Number(env.MEDIA_RETENTION_DAYS)
  const max = Number(env.MEDIA_MAX_BYTES)
  return {
    linkTtlMs: (env.MEDIA_LINK_TTL_S && ttlS > 0 ? ttlS : DEFAULT_MEDIA_LINK_TTL_S) * 1000,
    retentionMs: (env.MEDIA_RETENTION_DAYS && days > 0 ? days : DEFAULT_MEDIA_RETENTION_DAYS) * 24 * 60 * 60 * 1000,
    maxBytes: env.MEDIA_MAX_BYTES && Number.isInteger(max) && max >= MIN_MEDIA_MAX_BYTES ? max : MIN_MEDIA_MAX_BYTES,
  }
}
