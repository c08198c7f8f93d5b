/** beta's MCP tools (spec 4.9): each one of the channel's REST operations, with the very schemas its routes validate. */
import { BetaCodeBody, BetaConnectBody, BetaPasswordBody, BetaPhoneParam } from '../../../schema/api/beta'
import { ACTS, READS_UPSTREAM, REMOVES, toolInput, type ToolSpec } from '../../lib/tool-spec'

const byBetaPhone = { path: BetaPhoneParam.shape }

export const betaTools: ToolSpec[] = [
  {
    name: 'connect_beta',
    title: 'Log in a beta account',
    description:
      'Starts logging in the user’s own beta account: mode code sends a one-time code to their beta app (then call submit_beta_code), mode qr returns a QR login link; the returned connect_url lets the user finish it themselves.',
    input: toolInput({ body: BetaConnectBody }),
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
    description:
      'Reports a beta login or connection: connected (reason flood_wait while sends are paused), code_required, password_required, initializing, disconnected, not_initialized or error; on disconnected or error with a reason (logged_out, blocked_by_beta, stranger_flag, …) tell the user instead of retrying.',
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
