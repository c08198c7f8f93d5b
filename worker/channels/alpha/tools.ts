/** alpha's MCP tools (spec 4.3 and 4.9), each one of its REST operations in routes.ts. */
import { AlphaConnectBody, AlphaPhoneParam } from '../../../schema/api/alpha'
import { ACTS, READS_UPSTREAM, REMOVES, toolInput, type ToolSpec } from '../../lib/tool-spec'

const byPhone = { path: AlphaPhoneParam.shape }

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
    description:
      'Returns the current QR code of an alpha link in progress; it expires quickly, so fetch a fresh one every 10 to 15 seconds while the user scans.',
    input: toolInput(byPhone),
    method: 'GET',
    path: '/channels/alpha-web/connections/{phoneNumber}/qr',
    hints: READS_UPSTREAM,
  },
  {
    name: 'get_alpha_status',
    title: 'Get the alpha link status',
    description:
      'Reports an alpha link: qr_pending and connecting are in progress, connected (or open) is done. connecting with reason passkey_required means the phone wants the owner’s passkey: tell the owner to open the connect_url page on a computer and follow it (it gives a one-time passkey link for the helper on web.whatsapp.com, where they confirm with fingerprint, face or PIN), and do not call connect_alpha meanwhile; with reason passkey_code, tell them to check that the phone shows the code on that page (and press “The codes match” if the page asks). disconnected and not_initialized mean start again with connect_alpha, except for reason passkey_required (passkey linking is off for this account: tell the owner it cannot be linked here until the service turns alpha_passkey_linking on) and blocked_by_alpha (the number is restricted): then tell the user instead of retrying. passkey_expired, passkey_rejected and passkey_timeout ended a passkey ceremony: ask the owner whether to try again before calling connect_alpha.',
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
