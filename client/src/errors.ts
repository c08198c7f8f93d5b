/**
 * The gateway's errors as exceptions, one class per body shape of the spec (part 7): messaging and usage routes
 * answer `{error_code: "daily_send_cap", error, retry_after_s?}` (MessagingError), the others (auth, keys, webhooks,
 * channels) `{success: false, error, error_code: 404}` (StatusError). Anything else (a bare 500, a proxy's page) is
 * a GatewayError with the status and the text.
 */

export class GatewayError extends Error {
  constructor(
    message: string,
    /** The HTTP status (0 when no answer came). */
    readonly status: number,
    /** Seconds to wait before repeating: the body's `retry_after_s` or the Retry-After header; null when neither. */
    readonly retryAfterS: number | null,
    /** The parsed JSON body, or the text when it was not JSON. */
    readonly body: unknown
  ) {
    super(message)
    this.name = 'GatewayError'
  }
}

/** A GatewayError whose body named a code: a string for the messaging family, the HTTP status for the other. */
abstract class CodedError<C extends string | number> extends GatewayError {
  constructor(
    readonly code: C,
    message: string,
    status: number,
    retryAfterS: number | null,
    body: unknown
  ) {
    super(message, status, retryAfterS, body)
  }
}

/** A messaging or usage refusal: `code` is the spec's stable code (`daily_send_cap`, `loop_guard`, `invalid_cursor`, …). */
export class MessagingError extends CodedError<string> {
  override readonly name = 'MessagingError'
}

/** An auth, key, webhook or channel error: `code` is the HTTP status, as the body's `error_code` says. */
export class StatusError extends CodedError<number> {
  override readonly name = 'StatusError'
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

function retryAfter(body: Record<string, unknown> | null, headers: Headers): number | null {
  if (body && typeof body.retry_after_s === 'number') return body.retry_after_s
  const header = headers.get('retry-after')
  return header !== null && /^\d+$/.test(header) ? Number(header) : null
}

/** The error a failed response stands for; `parsed` is what openapi-fetch already read from the body, if anything. */
export async function errorFromResponse(response: Response, parsed?: unknown): Promise<GatewayError> {
  let body = parsed
  if (body === undefined) {
    const text = await response.text().catch(() => '')
    try {
      body = JSON.parse(text)
    } catch {
      body = text
    }
  }
  const record = isRecord(body) ? body : null
  const retry = retryAfter(record, response.headers)
  const text = record && typeof record.error === 'string' ? record.error : `HTTP ${response.status}`
  if (record && typeof record.error_code === 'string') return new MessagingError(record.error_code, text, response.status, retry, body)
  if (record && record.success === false && typeof record.error_code === 'number') return new StatusError(record.error_code, text, response.status, retry, body)
  return new GatewayError(text, response.status, retry, body)
}
