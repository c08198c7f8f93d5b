/**
 * Channels whose issue has not landed yet (beta 4.4): their REST operations and MCP tools,
 * answered from this one place with 501 `not_implemented` in the channel family's error shape. A channel's entry is
 * deleted when its folder lands and its line is added to registry.ts.
 */
import { Hono } from 'hono'
import type { AppEnv } from '../env'
import type { ChannelId, SendRules } from './contract'
import { ApiError } from '../errors'
import { ACTS, READS_UPSTREAM, REMOVES, phoneNumberArg, toolInput, type HttpMethod, type ToolSpec } from '../lib/tool-spec'
import { BetaCodeBody, BetaPasswordBody, ConnectBetaBody } from './planned-bodies'

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
