/**
 * Why an alpha send was refused before or by the upstream. `send()` rejects with this; the relay core stores `message`
 * as the message's error, and `retryable` tells it whether the same send may be tried again later.
 */
export type SendErrorCode =
  /** The session is not open (connecting, linking, stopped); the send never reached alpha. */
  | 'not_connected'
  /** Neither a usable peer id nor an E.164 phone number; groups and broadcast lists are not addressable. */
  | 'invalid_recipient'
  /** No text and no media. */
  | 'empty_message'
  /** The media URL is not a public https URL (checked again here; the edge already checked it). */
  | 'media_url_refused'
  /** The media could not be fetched (HTTP error, timeout, network). */
  | 'media_fetch_failed'
  /** The number has no alpha account (the lookup found none); sending would stay pending forever. */
  | 'not_on_alpha'
  /** alpha restricts this number from starting new chats (463, reach-out time lock) and the recipient is a new one. */
  | 'account_restricted'
  /** The media is larger than the relay sends. */
  | 'media_too_large'
  /** Baileys threw while encrypting, uploading or writing the message. */
  | 'upstream_error'
  /** Baileys did not finish handing the message over in time. */
  | 'upstream_timeout'

const RETRYABLE: ReadonlySet<SendErrorCode> = new Set(['not_connected', 'media_fetch_failed', 'upstream_error', 'upstream_timeout'])

export class SendError extends Error {
  readonly retryable: boolean

  constructor(
    readonly code: SendErrorCode,
    message: string
  ) {
    super(message)
    this.name = 'SendError'
    this.retryable = RETRYABLE.has(code)
  }
}
