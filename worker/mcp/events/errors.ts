/**
 * The errors of the MCP Events extension (SEP-3415 "Error Handling"): general-purpose codes from the range the
 * 2026-07-28 specification allocates, each carrying its specifics in typed `data`. Invalid arguments, callback URLs
 * and secrets are the standard -32602.
 */
import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server'

export const EVENTS_ERROR_CODES = {
  NotFound: -32023,
  Forbidden: -32024,
  ResourceExhausted: -32025,
  Unsupported: -32026,
  CallbackEndpointError: -32027,
} as const

/** SEP-3415 `lastError` / `data.reason` categories: never the receiver's own words (no response oracle). */
export type CallbackFailure = 'connection_refused' | 'timeout' | 'tls_error' | 'http_4xx' | 'http_5xx' | 'challenge_failed'

export const invalidParams = (message: string) => new ProtocolError(ProtocolErrorCode.InvalidParams, message)

export const eventNotFound = (name: string, known: readonly string[]) =>
  new ProtocolError(EVENTS_ERROR_CODES.NotFound, `Unknown event ${name}; events/list names the ${known.length} events: ${known.join(', ')}`, {
    kind: 'event',
  })

export const subscriptionNotFound = () =>
  new ProtocolError(EVENTS_ERROR_CODES.NotFound, 'No webhook subscription of this key matches that name, arguments and delivery.url', {
    kind: 'subscription',
  })

export const forbidden = (reason: string) => new ProtocolError(EVENTS_ERROR_CODES.Forbidden, `Forbidden: ${reason}`, { reason })

export const exhausted = (limit: string, max: number, message: string) => new ProtocolError(EVENTS_ERROR_CODES.ResourceExhausted, message, { limit, max })

export const callbackFailed = (reason: CallbackFailure, message: string) => new ProtocolError(EVENTS_ERROR_CODES.CallbackEndpointError, message, { reason })
