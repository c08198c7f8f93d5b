/**
 * The one error type and the one `onError`. A route throws `ApiError(status, code, message)`; the body takes one
 * of the spec's two shapes (part 7) by the route family: messaging/usage routes answer
 * `{error_code: <code>, error, retry_after_s?}`, auth/admin/webhook/channel routes answer
 * `{success: false, error, error_code: <HTTP status>}`. Anything else is logged and answered as a bare 500.
 */
import type { Context } from 'hono'
import { HTTPException } from 'hono/http-exception'
import type { ContentfulStatusCode } from 'hono/utils/http-status'
import type { AppEnv } from './env'

export type ErrorFamily = 'messaging' | 'status'

export class ApiError extends Error {
  constructor(
    readonly status: ContentfulStatusCode,
    readonly code: string,
    message: string,
    /** Seconds until the refused action can succeed; set on every daily-limit 429. */
    readonly retryAfterS?: number
  ) {
    super(message)
    this.name = 'ApiError'
  }
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
  console.error(JSON.stringify({ msg: 'unhandled error', path: c.req.path, error: String(err), stack: err.stack }))
  return errorResponse(c, new ApiError(500, 'internal_error', 'internal error'))
}
