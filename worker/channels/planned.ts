/**
 * Channels whose issue has not landed yet (beta 4.4, SMS 4.5, page inbox 4.6): their REST operations and MCP tools,
 * answered from this one place with 501 `not_implemented` in the channel family's error shape. A channel's entry is
 * deleted when its folder lands and its line is added to registry.ts.
 */
import { Hono } from 'hono'
import type { AppEnv } from '../env'
import type { ChannelId, SendRules } from './contract'
import { ApiError } from '../errors'
import { ACTS, READS, READS_UPSTREAM, REMOVES, phoneNumberArg, toolInput, type HttpMethod, type ToolSpec } from '../lib/tool-spec'
import { BetaCodeBody, BetaPasswordBody, ConnectAndroidSmsBody, ConnectBetaBody, ConnectSmsBody, SelectPageBody, SetSocialAppBody } from './planned-bodies'

const none = toolInput({})
const byBetaPhone = { path: { phoneNumber: phoneNumberArg } }

const betaTools: ToolSpec[] = [
  {
    name: 'connect_beta',
    title: 'Log in a beta account',
    description:
      'Starts logging in the user’s own beta account: mode code sends a one-time code to their beta app (then call submit_beta_code), mode qr returns a QR login link; the returned connect_url lets the user finish it themselves.',
    input: toolInput({ body: ConnectBetaBody }),
    method: 'POST',
    path: '/channels/beta/connect',
    hints: { ...ACTS, destructiveHint: true },
  },
  {
    name: 'submit_beta_code',
    title: 'Submit the beta login code',
    description:
      'Submits the one-time code the user received in their beta app; answers connected, or password_required when the account has a two-step password (then call submit_beta_password).',
    input: toolInput({ ...byBetaPhone, body: BetaCodeBody }),
    method: 'POST',
    path: '/channels/beta/connect/{phoneNumber}/code',
    hints: ACTS,
  },
  {
    name: 'submit_beta_password',
    title: 'Submit the beta two-step password',
    description: 'Submits the user’s two-step verification password to finish a beta login; ask the user for it and never repeat or store it.',
    input: toolInput({ ...byBetaPhone, body: BetaPasswordBody }),
    method: 'POST',
    path: '/channels/beta/connect/{phoneNumber}/password',
    hints: ACTS,
  },
  {
    name: 'get_beta_status',
    title: 'Get the beta connection status',
    description: 'Reports a beta login or connection: connected, code_required, password_required, initializing, disconnected, not_initialized or error.',
    input: toolInput(byBetaPhone),
    method: 'GET',
    path: '/channels/beta/connect/{phoneNumber}/status',
    hints: READS_UPSTREAM,
  },
  {
    name: 'disconnect_beta',
    title: 'Log out a beta account',
    description: 'Logs the beta account out of the service and removes it, so sending and receiving on it stop; ask the user first. Idempotent.',
    input: toolInput(byBetaPhone),
    method: 'DELETE',
    path: '/channels/beta/{phoneNumber}',
    hints: REMOVES,
  },
]

const smsTools: ToolSpec[] = [
  {
    name: 'connect_sms',
    title: 'Connect an SMS number',
    description:
      "Connects the user's own SMS number at their telephony provider (account SID and auth token) and points the number's incoming-SMS webhook at the service. A +1 (US/Canada) number needs a2p_registered true, after carrier registration.",
    input: toolInput({ body: ConnectSmsBody }),
    method: 'POST',
    path: '/channels/sms/twilio',
    // Replaces whatever incoming-SMS webhook the number had at the provider.
    hints: { ...ACTS, destructiveHint: true, idempotentHint: true },
  },
  {
    name: 'connect_android_sms',
    title: 'Connect an Android SMS gateway',
    description:
      "Connects an Android phone running the SMS gateway app (cloud or local mode) so SMS go out from the user's own SIM; registers the webhooks for incoming SMS and delivery reports. When both SMS connections exist, sends use the phone.",
    input: toolInput({ body: ConnectAndroidSmsBody }),
    method: 'POST',
    path: '/channels/sms/android-gateway',
    hints: { ...ACTS, idempotentHint: true },
  },
  {
    name: 'get_sms_status',
    title: 'Get the SMS connection',
    description: 'Reports the SMS connection at the telephony provider: the number and its state.',
    input: none,
    method: 'GET',
    path: '/channels/sms',
    hints: READS_UPSTREAM,
  },
  {
    name: 'get_android_sms_status',
    title: 'Get the Android SMS gateway connection',
    description: 'Reports the Android SMS gateway connection, including when the phone was last seen.',
    input: none,
    method: 'GET',
    path: '/channels/sms/android-gateway',
    hints: READS_UPSTREAM,
  },
  {
    name: 'disconnect_sms',
    title: 'Disconnect SMS',
    description:
      'Clears the webhooks the service set up and removes the SMS number from the service (it stays with the provider); ask the user first. Idempotent.',
    input: none,
    method: 'DELETE',
    path: '/channels/sms',
    hints: REMOVES,
  },
]

const pageInboxTools: ToolSpec[] = [
  {
    name: 'set_social_app',
    title: 'Save the social app',
    description:
      "Saves the user's own registered social app (app ID, app secret, configuration ID), needed once before connect_social_inbox; the answer gives the redirect URI and callback URL to paste into that app.",
    input: toolInput({ body: SetSocialAppBody }),
    method: 'PUT',
    path: '/channels/meta/app',
    hints: { ...REMOVES, openWorldHint: false },
  },
  {
    name: 'connect_social_inbox',
    title: 'Connect a page inbox',
    description:
      'Returns a short-lived connect_url where the user grants the page permissions; afterwards pick the page with list_pages and select_page. Answers social_app_required until set_social_app was done.',
    input: none,
    method: 'POST',
    path: '/channels/meta/connect',
    hints: ACTS,
  },
  {
    name: 'get_social_inbox_status',
    title: 'Get the page-inbox connection',
    description: 'Reports the page-inbox connection: pending, pages_loaded, connected, failed (with a reason) or expired.',
    input: none,
    method: 'GET',
    path: '/channels/meta/status',
    hints: READS,
  },
  {
    name: 'list_pages',
    title: 'List pages',
    description: 'Lists the pages the user granted access to, so one can be chosen with select_page.',
    input: none,
    method: 'GET',
    path: '/channels/meta/pages',
    hints: READS_UPSTREAM,
  },
  {
    name: 'select_page',
    title: 'Select the page',
    description:
      'Connects one page (and the professional account linked to it) as the inbox; one page per account. On this channel you can only reply to people who wrote, within 24 hours of their last message.',
    input: toolInput({ body: SelectPageBody }),
    method: 'POST',
    path: '/channels/meta/pages/select',
    hints: { ...ACTS, idempotentHint: true },
  },
  {
    name: 'disconnect_social_inbox',
    title: 'Disconnect the page inbox',
    description: 'Removes the page connection and its linked professional account; ask the user first. Idempotent.',
    input: none,
    method: 'DELETE',
    path: '/channels/meta',
    hints: REMOVES,
  },
]

/** A planned channel: its tools, and the send rules of the spec that already hold for accounts stored on it. */
type PlannedChannel = { id: ChannelId; title: string; tools: ToolSpec[]; rules: SendRules }

const PLANNED: readonly PlannedChannel[] = [
  {
    id: 'beta',
    title: 'The beta channel',
    tools: betaTools,
    rules: {
      title: 'beta channel',
      address: 'phone',
      strangers: { allowed: false, status: 422, code: 'beta_requires_existing_contact', message: 'On beta only existing contacts can be messaged' },
    },
  },
  { id: 'sms', title: 'The SMS channel', tools: smsTools, rules: { title: 'SMS channel', address: 'phone', strangers: { allowed: true } } },
  {
    id: 'social',
    title: 'The page-inbox channel',
    tools: pageInboxTools,
    rules: {
      title: 'page inbox',
      address: 'social',
      strangers: { allowed: false, status: 409, code: 'needs_inbound_first', message: 'On the page inbox only people who wrote to the page can be messaged' },
    },
  },
]

const NOT_BUILT = '(Not available yet on this server: every call answers HTTP 501) '

/** The planned channels' tools, listed so agents see the final vocabulary, each saying it is not built yet. */
export const PLANNED_TOOLS: readonly ToolSpec[] = PLANNED.flatMap((p) => p.tools.map((t) => ({ ...t, description: `${NOT_BUILT}${t.description}` })))

/** Method and Hono path (relative to /v1) of every planned operation, with what is missing, in the spec's order. */
export const NOT_IMPLEMENTED: readonly (readonly [HttpMethod, string, string])[] = PLANNED.flatMap((p) =>
  p.tools.map((t) => [t.method, t.path.replace(/\{(\w+)\}/g, ':$1'), p.title] as const)
)

/** The send rules of a planned channel (spec 4.2, 7), for accounts stored on it before its folder lands. */
export function plannedSendRules(id: ChannelId): SendRules | undefined {
  return PLANNED.find((p) => p.id === id)?.rules
}

/** Mounted under /v1 after every real route, so a real route always wins. */
export const plannedRoutes = new Hono<AppEnv>()

for (const [method, path, what] of NOT_IMPLEMENTED) {
  plannedRoutes.on(method, path, () => {
    throw new ApiError(501, 'not_implemented', `${what} is not available yet`)
  })
}
