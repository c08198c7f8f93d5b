/**
 * The request parameters of the MCP Events extension (SEP-3415), read with zod at the edge. Cursors are opaque
 * strings, absent meaning null; `arguments` are checked against the event's own `inputSchema` (access.ts), not here.
 * `events/subscribe` also takes the short form of issue 24 (`callback_url`, `secret`, `ttl` in seconds) besides the
 * SEP's `delivery: {url, secret}` and `ttlMs`.
 */
import { z } from 'zod'

/** Longest hold of one `events/poll` (the REST wait's own ceiling). */
export const POLL_MAX_TIMEOUT_MS = 60_000
export const POLL_MAX_EVENTS = 100

const name = z.string().min(1).max(100)
const args = z.record(z.string(), z.unknown()).optional()
const cursor = z.string().max(200).nullable().optional()
const maxAgeMs = z.number().int().min(0).optional()

export const ListEventsParams = z.object({ cursor: z.string().max(200).optional() })

export const PollParams = z.object({
  name,
  arguments: args,
  cursor,
  maxAgeMs,
  maxEvents: z.number().int().min(1).max(POLL_MAX_EVENTS).optional(),
  /** From the design sketch (the final SEP leaves holding to the server); how long to hold the request at most. */
  timeoutMs: z.number().int().min(0).max(POLL_MAX_TIMEOUT_MS).optional(),
})
export type PollParams = z.infer<typeof PollParams>

export const StreamParams = z.object({ name, arguments: args, cursor, maxAgeMs })
export type StreamParams = z.infer<typeof StreamParams>

const callbackUrl = z.string().min(1).max(2048)
const secret = z.string().min(1).max(200)

export const SubscribeParams = z
  .object({
    name,
    arguments: args,
    delivery: z.object({ mode: z.literal('webhook').optional(), url: callbackUrl, secret: secret.optional() }).optional(),
    callback_url: callbackUrl.optional(),
    secret: secret.optional(),
    cursor,
    maxAgeMs,
    /** Suggested lifetime; null asks for no expiry (granted a finite one: subscribe.ts). */
    ttlMs: z.number().int().min(0).nullable().optional(),
    ttl: z.number().int().min(0).optional(),
  })
  .refine((p) => (p.delivery?.url ?? p.callback_url) !== undefined, { error: 'delivery.url (or callback_url) is required', path: ['delivery', 'url'] })
export type SubscribeParams = z.infer<typeof SubscribeParams>

export const UnsubscribeParams = z
  .object({ name, arguments: args, delivery: z.object({ url: callbackUrl }).optional(), callback_url: callbackUrl.optional() })
  .refine((p) => (p.delivery?.url ?? p.callback_url) !== undefined, { error: 'delivery.url (or callback_url) is required', path: ['delivery', 'url'] })
export type UnsubscribeParams = z.infer<typeof UnsubscribeParams>

/** An event as every mode hands it out (SEP-3415 `EventOccurrence`); `data` is the spec 6 webhook payload. */
export type EventOccurrence = { eventId: string; name: string; timestamp: string; data: unknown; cursor?: string | null }
