/** The error answers every chat-action route shares (issue 25), in the messaging family's body. */
import { MessagingError } from '../../schema/api/common'

const json = (description: string) => ({ description, content: { 'application/json': { schema: MessagingError } } })

export const ACTION_ERRORS = {
  400: json('Invalid request (error_code names the field)'),
  401: json('Missing or invalid API key'),
  403: json('`key_scope` (a read key; a reply key outside its window), `key_account`, `key_expired`, `account_suspended`'),
  404: json('`message_not_found`, `account_not_found` or `contact_not_found`'),
  409: json('`account_not_connected`; page inbox: `needs_inbound_first` or `outside_window` (its 24-hour window, as for a send)'),
  422: json(
    '`unsupported_on_channel` (the channel cannot do this; the message names it), `message_not_on_network`, `message_not_inbound`, `action_refused` (the network said no)'
  ),
  429: json('`rate_limited`: the account’s own limit for these actions (or the network asked to wait); `retry_after_s` says when'),
  502: json('`action_refused`: a custom channel bridge did not take it'),
  503: json('`relay_unavailable`: no relay holding the account answered; try again after `retry_after_s`'),
}
