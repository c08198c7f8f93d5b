/**
 * Every error code the service answers with, its HTTP status, where a client sees it and when: the one table that
 * `ApiError` takes its codes from (a code missing here does not compile) and that docs/errors.md is generated from
 * (`npm run docs`). Pure data, so the docs script reads it outside the Worker.
 *
 * `family` says where the code reaches a client (docs/errors.md "Two shapes"): `messaging` in the string
 * `error_code` of the messages, accounts, usage and audit routes; `status` on every other route, whose body carries
 * only the HTTP status as `error_code` (the code is in the audit log and the logs); `mcp` in a JSON-RPC error's
 * `data.error_code` on /mcp itself.
 */
import { GATEWAY_WEBHOOK_MAX_BYTES, MAX_BODY_BYTES, MCP_MAX_BODY_BYTES } from './abuse-limits'
import { PLANS } from '../plans'

const MiB = 1024 * 1024
const FREE = PLANS.free

export type ErrorFamilyShown = 'messaging' | 'status' | 'mcp'

/** Routes under these prefixes answer errors with a string `error_code`; every other route with the HTTP status. */
export const MESSAGING_ROUTE_PREFIXES = ['/v1/messages', '/v1/accounts', '/v1/usage', '/v1/audit'] as const

export type ErrorCodeInfo = { status: readonly number[]; family: readonly ErrorFamilyShown[]; when: string }

const M = ['messaging'] as const
const S = ['status'] as const
const MS = ['messaging', 'status'] as const
const ALL = ['messaging', 'status', 'mcp'] as const
const MCP = ['mcp'] as const

export const ERROR_CODES = {
  // ── requests in general ─────────────────────────────────────────────────────────────────────────────────────────
  invalid_request: {
    status: [400, 415],
    family: MS,
    when: 'The body is not valid JSON (400), is declared as a type other than JSON (415; on /v1 a body with no Content-Type or text/plain is read as JSON), or a field is wrong where no field-specific code exists',
  },
  unauthorized: { status: [401], family: ALL, when: 'No API key, or the key is invalid or revoked (also a missing or wrong relay token or admin token)' },
  invalid_api_key: { status: [401], family: MCP, when: 'The key sent to /mcp is invalid or revoked' },
  api_not_enabled: { status: [403, 404], family: ALL, when: 'The API is switched off for this tenant: 404 on REST (the API looks absent), 403 on /mcp' },
  key_scope: {
    status: [403],
    family: MS,
    when: 'The key’s scope does not allow this operation (a read key sending; a reply key writing to someone outside its reply window)',
  },
  key_account: { status: [403], family: MS, when: 'The key is limited to other accounts than the one the request names or resolves to' },
  key_expired: { status: [403], family: ALL, when: 'The key is past its expiry' },
  key_in_url: { status: [400], family: MCP, when: 'An API key was put in the /mcp URL; send it in a header' },
  origin_not_allowed: {
    status: [403],
    family: ['status', 'mcp'],
    when: 'A browser Origin not listed in MCP_ALLOWED_ORIGINS called /mcp, or a page other than the passkey helper’s origins (ALPHA_PASSKEY_HELPER_ORIGINS) called alpha’s passkey API',
  },
  rate_limited: {
    status: [429],
    family: ALL,
    when: 'An abuse limit was passed (requests per key or tenant, pushes, linking, pairing codes, webhook tests, login steps, failed authentication; see the abuse limits); `Retry-After` says when to try again',
  },
  body_too_large: {
    status: [413],
    family: ALL,
    when: `The request body is over the route’s cap (${MAX_BODY_BYTES / 1024} KiB on /v1 and /admin, ${MCP_MAX_BODY_BYTES / MiB} MiB on /mcp, ${GATEWAY_WEBHOOK_MAX_BYTES / MiB} MiB on the phone’s webhook)`,
  },
  not_found: { status: [404], family: MS, when: 'No route answers this method and path' },
  not_implemented: {
    status: [501],
    family: MS,
    when: 'The operation belongs to a channel that is not built yet, or sending on the account’s channel is not available',
  },
  internal_error: { status: [500], family: ALL, when: 'A bug: the request failed in a way the service did not expect (logged); nothing was retried' },
  temporarily_unavailable: {
    status: [503],
    family: MS,
    when: 'The store or the account’s object failed for a moment; repeat the request after `Retry-After` (nothing was written)',
  },
  invalid_idempotency_key: { status: [400], family: MS, when: '`Idempotency-Key` is empty, longer than 255 characters, or not visible ASCII' },
  idempotency_key_in_progress: {
    status: [409],
    family: MS,
    when: 'The first request with this `Idempotency-Key` is still running; repeat after `Retry-After` to get its answer',
  },
  idempotency_key_reused: {
    status: [422],
    family: MS,
    when: 'This `Idempotency-Key` was used in the last 24 h for a different request (another body, path or API key)',
  },

  // ── sending (POST /v1/messages) ─────────────────────────────────────────────────────────────────────────────────
  invalid_text: { status: [400], family: M, when: '`text` is missing, empty or longer than 4096 characters' },
  invalid_media_url: { status: [400], family: MS, when: '`media_url` (or a push’s `mediaUrl`) is not a public https URL' },
  invalid_recipient: {
    status: [400],
    family: M,
    when: '`to` names nobody, two addresses, or a contact_id with another person’s address, or the value is malformed',
  },
  invalid_account_id: { status: [400], family: M, when: '`account_id` is malformed, or a key limited to several accounts must name one (GET /v1/audit)' },
  no_connected_account: { status: [409], family: M, when: 'No account is connected, so none can be picked' },
  ambiguous_account: { status: [400], family: MS, when: 'Several accounts are connected and the request does not name one in `account_id`' },
  account_not_found: { status: [404], family: M, when: 'The named account is not one of this tenant’s (or not one this key may use)' },
  account_not_connected: { status: [409], family: M, when: 'The named account is connecting or disconnected' },
  account_restricted: { status: [403], family: M, when: 'The channel restricted the account: it may not send, or (beta after a spam flag) may only reply' },
  account_suspended: { status: [403], family: M, when: 'Sending is suspended after an opener burst, until the service reviews the account' },
  contact_not_found: { status: [404], family: M, when: '`to.contact_id` names no contact of this tenant' },
  contact_channel_mismatch: { status: [422], family: M, when: 'The contact belongs to another channel or account than the sending account' },
  contact_do_not_disturb: { status: [422], family: M, when: 'The person replied STOP and does not want messages' },
  contact_opted_out: { status: [422], family: M, when: 'SMS: the person replied STOP' },
  contact_private: { status: [422], family: MS, when: 'The contact is marked private: nothing is stored or sent (also a push from a private contact)' },
  beta_requires_existing_contact: { status: [422], family: M, when: 'beta can message only people already among the account’s contacts or chats' },
  needs_inbound_first: { status: [409], family: M, when: 'Page inbox: the person never wrote to the page' },
  outside_window: { status: [409], family: M, when: 'Page inbox: more than 24 hours since the person’s last message' },
  a2p_unconfirmed: {
    status: [409],
    family: MS,
    when: 'SMS from a +1 number whose A2P registration is not confirmed (at connect: connected without `a2p_registered: true`)',
  },
  media_not_supported: { status: [422], family: M, when: 'SMS: the number sends through the Android phone (text only) or has no MMS capability at Twilio' },
  daily_send_cap: {
    status: [429],
    family: M,
    when: `The account’s sends of this UTC day reached the plan cap (${FREE.sendsPerDay} on the free plan); \`retry_after_s\` is the seconds to the next UTC day`,
  },
  new_contact_cap: {
    status: [429],
    family: M,
    when: `The account’s new contacts of this UTC day reached today’s allowance (${FREE.newContactsPerDay} on the free plan, less on an alpha number’s warm-up days); \`retry_after_s\` as above`,
  },
  loop_guard: {
    status: [429],
    family: M,
    when: 'The loop guard: as many messages as it allows went to this person since their last message; their next message resets it',
  },
  opener_burst: {
    status: [429],
    family: M,
    when: 'The same first message went to too many never-written people in a short time (the opener burst); sending is then suspended',
  },
  account_at_risk: {
    status: [429],
    family: M,
    when: 'Extension: the network reported a ban-risk signal for the account (GET /v1/accounts `risk`); new contacts pause while it lasts, replies still go out; `retry_after_s` when the end is known',
  },
  invalid_reply_to: {
    status: [400, 422],
    family: M,
    when: 'Extension: `reply_to` is malformed (400), or names no message of this account and person that reached the network (422)',
  },
  // ── chat actions (extensions: reactions, typing, read marks, lookups) ─────────────────────────────────────────
  unsupported_on_channel: {
    status: [422],
    family: M,
    when: 'Extension: the account’s channel cannot do this (a quoted reply, reaction, typing, read mark or lookup); the message names the channel (docs/api.md support table)',
  },
  message_not_on_network: {
    status: [422],
    family: M,
    when: 'Extension: a reaction or read mark names a message that never reached the network (queued, failed, held)',
  },
  message_not_inbound: { status: [422], family: M, when: 'Extension: a read mark names a message the account sent; only a person’s messages are marked read' },
  action_refused: {
    status: [422, 502],
    family: M,
    when: 'Extension: the network refused the reaction, typing notice, read mark or lookup; the message says why',
  },
  invalid_emoji: { status: [400], family: M, when: 'Extension: `emoji` is not exactly one emoji' },
  invalid_phone: { status: [400], family: M, when: 'Extension: `phone` of a lookup is not an E.164 number' },
  not_awaiting_approval: { status: [409], family: M, when: 'Approve or reject on a message that is not (or no longer) awaiting approval' },
  approval_expired: { status: [409], family: M, when: 'The approval of a held message expired (24 h); the message failed' },

  // ── reading ─────────────────────────────────────────────────────────────────────────────────────────────────────
  invalid_limit: { status: [400], family: M, when: '`limit` is not an integer from 1 to 100' },
  invalid_direction: { status: [400], family: M, when: '`direction` is not `inbound` or `outbound`' },
  invalid_cursor: { status: [400], family: MS, when: '`before` or `cursor` is not one this endpoint returned' },
  invalid_timeout: { status: [400], family: M, when: '`timeout_s` is not an integer from 0 to 55' },
  invalid_outcome: { status: [400], family: M, when: 'GET /v1/audit: `outcome` is not one of the logged outcomes' },
  message_not_found: { status: [404], family: M, when: 'No message with this id for this tenant (or this key’s accounts)' },
  invalid_date: { status: [400], family: M, when: 'GET /v1/messages/archive: `date` is not a UTC day as YYYY-MM-DD' },
  archive_not_found: { status: [404], family: M, when: 'GET /v1/messages/archive: nothing of that account and day was archived (not yet deleted, or never)' },
  wait_concurrency: { status: [429], family: M, when: 'Another wait on an account whose wait slots are all taken' },
  media_not_found: { status: [404], family: S, when: 'No media item with this id for this tenant' },
  media_unavailable: { status: [404], family: S, when: 'The media item could not be fetched from the provider; the message’s `media.reason` says why' },
  media_too_large: { status: [413], family: S, when: 'The media item was over the size cap and was not stored' },
  link_expired: { status: [410], family: S, when: 'A signed link (media, hosted page) is past its expiry' },
  invalid_signature: { status: [403], family: S, when: 'A signed media link or a provider callback carries a wrong signature' },
  invalid_token: {
    status: [401, 403],
    family: S,
    when: 'A hosted page’s token is not valid (or its tenant’s API is off): 403; alpha’s passkey API called without its link’s token: 401',
  },
  length_required: { status: [411], family: S, when: 'A relay’s media upload came without its exact length' },

  // ── channels ────────────────────────────────────────────────────────────────────────────────────────────────────
  account_cap_reached: {
    status: [409],
    family: S,
    when: `Connecting another account would pass the plan’s account cap (${FREE.accountsCap} on the free plan)`,
  },
  account_exists: { status: [409], family: S, when: 'The number is already connected on another channel of this tenant' },
  connection_not_found: {
    status: [404],
    family: S,
    when: 'No alpha or beta connection for this number (alpha’s QR, beta’s login steps; the status routes answer not_initialized instead)',
  },
  code_invalid: { status: [400], family: S, when: 'beta: the login code is wrong' },
  password_invalid: { status: [422], family: S, when: 'beta: the two-step password is wrong' },
  code_expired: { status: [410], family: S, when: 'beta: the login code expired; the login stays open and beta sent a fresh code: enter that one' },
  too_many_attempts: { status: [429], family: S, when: 'beta ended the login after too many attempts; wait before trying again' },
  unknown_number: { status: [404], family: S, when: 'beta: the number has no beta account' },
  passkey_not_pending: {
    status: [409],
    family: S,
    when: 'alpha passkey linking: the ceremony is over, or no code waits for the owner’s confirmation; start linking again',
  },
  passkey_token_used: { status: [410], family: S, when: 'alpha passkey linking: the passkey link was used already (it works once)' },
  passkey_expired: { status: [410], family: S, when: 'alpha passkey linking: the passkey link expired, or the phone stopped waiting for the passkey' },
  passkey_rejected: { status: [422], family: S, when: 'alpha passkey linking: alpha did not accept the assertion or the confirmation; linking stopped' },
  number_banned: { status: [403], family: S, when: 'beta: the number is banned' },
  no_login_pending: { status: [409], family: S, when: 'beta: a code or password was sent while no login waits for one' },
  login_failed: { status: [502], family: S, when: 'beta: the login failed upstream for another reason (the message says which)' },
  relay_unavailable: {
    status: [503],
    family: MS,
    when: 'No relay runs the session right now, so the login step (or, an extension, the chat action) cannot be passed on',
  },
  invalid_provider_credentials: { status: [400], family: S, when: 'SMS: Twilio or the SMS gateway refused the credentials' },
  provider_account_inactive: { status: [422], family: S, when: 'SMS: the Twilio account is not active' },
  number_not_found: { status: [404], family: S, when: 'SMS: the number is not on this Twilio account' },
  number_not_sms_capable: { status: [422], family: S, when: 'SMS: the number has no SMS capability at Twilio' },
  no_device: { status: [422], family: S, when: 'SMS gateway: no phone is registered with the gateway account' },
  invalid_base_url: { status: [400], family: S, when: 'SMS gateway (local mode): `base_url` is not a public https URL' },
  provider_unavailable: { status: [502], family: S, when: 'SMS: Twilio or the gateway could not be reached or answered an error' },
  social_app_required: { status: [409], family: S, when: 'Page inbox: connect without a saved app (PUT /v1/channels/meta/app first)' },
  pages_not_loaded: { status: [409], family: S, when: 'Page inbox: no pages to choose from (the permission step was not finished, or it expired)' },
  page_not_found: { status: [404], family: S, when: 'Page inbox: the page is not among the granted ones' },
  page_not_messageable: { status: [422], family: S, when: 'Page inbox: your role on the page does not include messaging' },
  upstream_error: {
    status: [502],
    family: S,
    when: 'Page inbox: the provider refused the subscription; alpha passkey linking: the passkey request alpha sent could not be read',
  },
  invalid_payload: { status: [400], family: S, when: 'A provider callback’s body is not JSON' },
  verification_failed: { status: [403], family: S, when: 'A provider’s webhook verification used a wrong verify token' },
  channel_not_connected: { status: [409], family: S, when: 'Custom channel: a push before the webhook was set' },
  invalid_webhook_url: {
    status: [400],
    family: S,
    when: 'A webhook URL is not allowed (not https on 443/8443, an IP literal, a private, loopback or own host)',
  },

  // ── webhooks ────────────────────────────────────────────────────────────────────────────────────────────────────
  webhooks_not_enabled: { status: [403], family: S, when: 'Webhooks are switched off for this tenant' },
  webhook_not_found: { status: [404], family: S, when: 'No subscription with this name or id' },
  webhook_name_taken: { status: [409], family: S, when: 'Another subscription has this name' },
  webhook_limit: { status: [409], family: S, when: 'The tenant has the most subscriptions allowed' },
  webhook_disabled: { status: [409], family: S, when: 'Replay of a subscription that is switched off' },
  webhook_paused: { status: [409], family: S, when: 'Replay to a URL whose delivery is paused; re-enable it first' },
  invalid_since: { status: [400], family: S, when: 'Replay: `since` is older than the 7 days events are kept' },
  invalid_until: { status: [400], family: S, when: 'Replay: `until` is not later than `since`' },

  // ── admin, keys, relays, MCP transport ──────────────────────────────────────────────────────────────────────────
  key_not_found: { status: [404], family: S, when: 'No key with this id (revoking, reading)' },
  tenant_not_found: { status: [404], family: S, when: 'Admin API: no tenant with this id' },
  relay_not_found: { status: [404], family: S, when: 'Admin API: no relay with this id' },
  unknown_shard: { status: [400], family: S, when: 'Admin API: a `shard` this gateway binds no DB_SHARD_<n> for' },
  shards_full: { status: [507], family: S, when: 'Admin API: creating a tenant when every shard is past 90 % of its capacity or unreachable' },
  shard_full: { status: [507], family: S, when: 'Admin API: moving a tenant to a shard that is `full` or unreachable' },
  move_running: { status: [409], family: S, when: 'Admin API: a move of this tenant runs already' },
  already_there: { status: [409], family: S, when: 'Admin API: moving a tenant to the shard it lives on' },
  move_not_found: { status: [404], family: S, when: 'Admin API: this tenant was never moved' },
  tenant_moving: { status: [409], family: S, when: 'Admin API: changing a tenant while it moves between shards' },
  admin_disabled: { status: [503], family: S, when: 'The admin API is off: ADMIN_TOKEN is unset or shorter than 32 characters' },
  stale_fence: { status: [409], family: S, when: 'A relay wrote a session it no longer holds' },
  upgrade_required: { status: [426], family: S, when: 'The relay endpoint was called without a WebSocket upgrade' },
  method_not_allowed: { status: [405], family: MCP, when: 'A method other than POST on /mcp (this server is stateless, JSON only)' },
  parse_error: { status: [400], family: MCP, when: 'The /mcp body is not valid JSON' },
  batch_not_supported: { status: [400], family: MCP, when: 'A JSON-RPC batch was sent to /mcp' },
} as const satisfies Record<string, ErrorCodeInfo>

export type ErrorCode = keyof typeof ERROR_CODES
