/**
 * The one error type and the one `onError`. A route throws `ApiError(status, code, message)`; the body takes one
 * of the spec's two shapes (part 7) by the route family: messaging/usage routes answer
 * `{error_code: <code>, error, retry_after_s?}`, auth/admin/webhook/channel routes answer
 * `{success: false, error, error_code: <HTTP status>}`. A failure of the platform's storage or objects (D1, a Durable
 * Object reset or overloaded) is answered 503 `temporarily_unavailable` with `Retry-After`: repeating the request is
 * safe (docs/ARCHITECTURE.md#failure-behaviour); so is a write refused while the tenant moves to another shard.
 * Anything else is logged and answered as a bare 500.
 */
import type { Context } from 'hono'
import { HTTPException } from 'hono/http-exception'
import type { ContentfulStatusCode } from 'hono/utils/http-status'
import type { AppEnv, ErrorFamily } from './env'
import type { ErrorCode } from './lib/error-codes'

export class ApiError extends Error {
  constructor(
    readonly status: ContentfulStatusCode,
    /** One of the table in lib/error-codes.ts, which docs/errors.md is generated from. */
    readonly code: ErrorCode,
    message: string,
    /** Seconds until the refused action can succeed; set on every daily-limit 429. */
    readonly retryAfterS?: number
  ) {
    super(message)
    this.name = 'ApiError'
  }
}

/** Seconds a client waits before repeating a request refused by a passing platform failure. */
export const TRANSIENT_RETRY_AFTER_S = 1
/** Seconds a client waits before repeating a write refused because its tenant is being moved to another shard. */
export const MOVE_RETRY_AFTER_S = 5

/**
 * The text a write is refused with while its tenant moves between shards: by the fence triggers inside D1 (the shards
 * migration) and by the AccountDO, which knows of the move (docs/ARCHITECTURE.md, "Moving a tenant").
 */
export const TENANT_MOVING = 'tenant_moving'

export function tenantMovingError(): Error {
  return new Error(`${TENANT_MOVING}: this account's data is moving to another database; repeat the request shortly`)
}

/** Whether `err` (or what it wraps: Drizzle's error, a Durable Object call's) is a write refused by a move. */
export function isTenantMoving(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 4; e = e.cause, depth++) if (e.message.includes(TENANT_MOVING)) return true
  return false
}
/** An overloaded Durable Object must not be retried at once (Cloudflare: Durable Objects error handling). */
export const OVERLOADED_RETRY_AFTER_S = 10

/**
 * Whether `err` is the platform failing for a moment rather than a bug: a D1 error (its message starts `D1_ERROR`,
 * also after crossing a Durable Object call), or an error the runtime marks on a Durable Object call that failed
 * because the object was reset (`durableObjectReset`), could not be reached (`retryable`) or is `overloaded`.
 */
/** A D1 error, also inside the error Drizzle wraps it in (`Failed query: …`, the D1 error as its cause). */
function fromD1(err: Error): boolean {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 4; e = e.cause, depth++) if (e.message.startsWith('D1_ERROR')) return true
  return false
}

export function transientFailure(err: unknown): ApiError | null {
  if (!(err instanceof Error)) return null
  const flag = (name: string) => Reflect.get(err, name) === true
  const message = 'The service could not complete this request just now; repeat it'
  if (isTenantMoving(err)) {
    return new ApiError(503, 'temporarily_unavailable', 'This account is being moved to another database; repeat the request shortly', MOVE_RETRY_AFTER_S)
  }
  if (flag('overloaded')) return new ApiError(503, 'temporarily_unavailable', message, OVERLOADED_RETRY_AFTER_S)
  if (fromD1(err) || flag('durableObjectReset') || flag('retryable')) {
    return new ApiError(503, 'temporarily_unavailable', message, TRANSIENT_RETRY_AFTER_S)
  }
  return null
}

export function errorBody(err: ApiError, family: ErrorFamily): Record<string, unknown> {
  if (family === 'status') return { success: false, error: err.message, error_code: err.status }
  return err.retryAfterS === undefined
    ? { error_code: err.code, error: err.message }
    : { error_code: err.code, error: err.message, retry_after_s: err.retryAfterS }
}

export function errorResponse(c: Context<AppEnv>, err: ApiError): Response {
  const headers: Record<string, string> = {}
  if (err.retryAfterS !== undefined) headers['Retry-After'] = String(err.retryAfterS)
  if (err.status === 401) headers['WWW-Authenticate'] = 'Bearer realm="gateway"'
  return c.json(errorBody(err, c.get('errorFamily') ?? 'status'), err.status, headers)
}

export function onError(err: Error, c: Context<AppEnv>): Response {
  if (err instanceof ApiError) return errorResponse(c, err)
  if (err instanceof HTTPException && err.status < 500) {
    // Hono's own validator rejects unparsable JSON bodies (400) and non-JSON content types (415) before zod sees
    // them; curl -d sends form encoding by default, so say what to send.
    const message =
      err.status === 400
        ? 'the request body is not valid JSON'
        : err.status === 415
          ? 'the request body must be JSON, sent with Content-Type: application/json'
          : err.message
    return errorResponse(c, new ApiError(err.status as ContentfulStatusCode, 'invalid_request', message))
  }
  const transient = transientFailure(err)
  console.error(JSON.stringify({ msg: transient ? 'platform failure' : 'unhandled error', path: c.req.path, error: String(err), stack: err.stack }))
  return errorResponse(c, transient ?? new ApiError(500, 'internal_error', 'internal error'))
}
