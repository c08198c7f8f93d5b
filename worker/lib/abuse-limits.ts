/**
 * Every abuse limit as plain data (docs/api.md "Limits and abuse protection" is generated from this module by
 * `npm run docs`): the Workers Rate Limiting rules of wrangler.toml (a test checks they agree), the webhook replay
 * quota and the request body caps. Abuse limits keep one tenant from hurting the others; the per-account daily caps
 * that protect a number live in the AccountDO (account/guards.ts).
 */

export type RateLimitName =
  | 'RL_API_KEY'
  | 'RL_TENANT'
  | 'RL_INBOUND'
  | 'RL_CONNECT_NUMBER'
  | 'RL_CONNECT_TENANT'
  | 'RL_PAIRING_CODE'
  | 'RL_WEBHOOK_TEST'
  | 'RL_AUTH_FAILURES'
  | 'RL_LOGIN_STEP'

export type RateLimitRule = {
  limit: number
  /** 10 or 60: the binding offers nothing else. */
  periodS: 10 | 60
  per: string
  what: string
  /** Its name in the RateLimit-Policy and RateLimit headers. */
  policy: string
  /** false: counted before any key is accepted, so no answer states it in RateLimit headers. */
  headers?: false
  /**
   * The high-volume limits ask the binding for one request in this many per key and isolate (the first of each
   * window, then every n-th, and every one after an "over" until it allows again), and its `[[ratelimits]]` limit is
   * `limit / sampleEvery` (`bindingLimit`). Under `wrangler dev` each binding call costs about half a millisecond of
   * CPU on the thread that runs everything, an eighth of a bare GET; deployed it is a round trip per request. A key
   * can pass its limit by fewer than `sampleEvery` requests per ask in flight in an isolate, against a binding that is
   * approximate per location anyway.
   */
  sampleEvery?: number
}

/** The limit a rule's `[[ratelimits]]` binding is configured with: a sampled rule's binding counts one in n. */
export const bindingLimit = (rule: RateLimitRule): number => rule.limit / (rule.sampleEvery ?? 1)

/** How many requests of a key a sampled binding call stands for. */
const SAMPLE = 10

/** Mirrors wrangler.toml (a test checks they agree). */
export const RATE_LIMITS: Record<RateLimitName, RateLimitRule> = {
  RL_API_KEY: { limit: 6000, periodS: 10, per: 'API key', what: 'requests under `/v1` and `/mcp`', policy: 'api-key', sampleEvery: SAMPLE },
  RL_TENANT: { limit: 12000, periodS: 10, per: 'tenant', what: 'requests under `/v1` and `/mcp`, all keys together', policy: 'tenant', sampleEvery: SAMPLE },
  RL_INBOUND: { limit: 6000, periodS: 10, per: 'tenant', what: '`POST /v1/channels/custom/inbound`', policy: 'inbound', sampleEvery: SAMPLE },
  RL_CONNECT_NUMBER: {
    limit: 5,
    periodS: 60,
    per: 'tenant and number',
    what: 'linking a number (`POST /v1/channels/alpha-web/connections`)',
    policy: 'connect-number',
  },
  RL_CONNECT_TENANT: { limit: 20, periodS: 60, per: 'tenant', what: 'linking numbers (`POST /v1/channels/alpha-web/connections`)', policy: 'connect-tenant' },
  RL_PAIRING_CODE: {
    limit: 3,
    periodS: 60,
    per: 'phone number, across tenants',
    what: 'pairing codes (a connect with `link_method: pairing_code` makes the phone show a prompt)',
    policy: 'pairing-code',
  },
  RL_WEBHOOK_TEST: { limit: 10, periodS: 60, per: 'tenant', what: '`POST /v1/webhooks/{webhookId}/test`', policy: 'webhook-test' },
  RL_AUTH_FAILURES: {
    limit: 20,
    periodS: 60,
    per: 'client address',
    what: 'wrong API keys and admin tokens (then 429 for the rest of the minute)',
    policy: 'auth-failures',
    headers: false,
  },
  RL_LOGIN_STEP: {
    limit: 10,
    periodS: 60,
    per: 'tenant and number',
    what: 'beta login codes and passwords submitted (the verify routes and the hosted page together)',
    policy: 'login-step',
  },
}

/** Replays per subscription per hour (one at a time besides; db/webhook-replays.ts). */
export const REPLAYS_PER_HOUR = 20

/**
 * Request bodies under /v1 and /admin stop here, streamed or not: the largest valid body (a send with a 4 KiB text,
 * a custom-channel push) is a few KiB, so 256 KiB refuses nothing real and caps what a parser is handed.
 */
export const MAX_BODY_BYTES = 256 * 1024
/** An /mcp body. A tool call is a few hundred bytes; the SDK's 4 MiB default would only let a client make the Worker buffer more. */
export const MCP_MAX_BODY_BYTES = 1024 * 1024
/** The largest webhook body the phone's route reads: 5 MiB of files base64-encoded (4/3) plus the JSON around them. */
export const GATEWAY_WEBHOOK_MAX_BYTES = 8 * 1024 * 1024
