/** Tools that link the user's alpha number (spec 4.3) and log in their beta account (spec 4.4). */
import { AlphaConnectBody, AlphaPhoneParam } from '../../../schema/api/alpha'
import { BetaCodeBody, BetaConnectBody, BetaPasswordBody, BetaPhoneParam } from '../../../schema/api/beta'
import { ACTS, READS_UPSTREAM, REMOVES, toolInput, type ToolSpec } from '../tool'

const byPhone = { path: AlphaPhoneParam.shape }
const byBetaPhone = { path: BetaPhoneParam.shape }

export const alphaTools: ToolSpec[] = [
  {
    name: 'connect_alpha',
    title: 'Link an alpha number',
    description:
      'Starts linking the user’s alpha number as a linked device and returns a connect_url page where the user scans the QR on their phone (or an 8-character code with link_method pairing_code). Only the user can complete it; then poll get_alpha_status until connected.',
    input: toolInput({ body: AlphaConnectBody }),
    method: 'POST',
    path: '/channels/alpha-web/connections',
    // force_new discards the existing session.
    hints: { ...ACTS, destructiveHint: true },
  },
  {
    name: 'get_alpha_qr',
    title: 'Get the alpha QR code',
    description: 'Returns the current QR code of an alpha link in progress; it expires quickly, so fetch a fresh one every 10 to 15 seconds while the user scans.',
    input: toolInput(byPhone),
    method: 'GET',
    path: '/channels/alpha-web/connections/{phoneNumber}/qr',
    hints: READS_UPSTREAM,
  },
  {
    name: 'get_alpha_status',
    title: 'Get the alpha link status',
    description:
      'Reports an alpha link: qr_pending and connecting are in progress, connected (or open) is done. disconnected and not_initialized mean start again with connect_alpha, except when the reason is passkey_required (the phone must link another way) or blocked_by_alpha (the number is restricted): then tell the user instead of retrying.',
    input: toolInput(byPhone),
    method: 'GET',
    path: '/channels/alpha-web/connections/{phoneNumber}/status',
    hints: READS_UPSTREAM,
  },
  {
    name: 'disconnect_alpha',
    title: 'Unlink an alpha number',
    description: 'Unlinks the alpha number and removes it from the service, so sending and receiving on it stop; ask the user first. Idempotent.',
    input: toolInput(byPhone),
    method: 'DELETE',
    path: '/channels/alpha-web/connections/{phoneNumber}',
    hints: REMOVES,
  },
]

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
    description: 'Reports a beta login or connection: connected (reason flood_wait while sends are paused), code_required, password_required, initializing, disconnected, not_initialized or error. On disconnected or error with a reason (logged_out, blocked_by_beta, stranger_flag, …) tell the user instead of retrying.',
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
