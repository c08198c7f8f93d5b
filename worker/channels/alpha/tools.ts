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
      'Reports an alpha link: connected (or open) is done; qr_pending and connecting are in progress, and connecting with reason passkey_required or passkey_code means tell the owner its message (the passkey step, on the connect_url page on a computer). disconnected or not_initialized: call connect_alpha again, except for blocked_by_alpha or a passkey_* reason: tell the user instead.',
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
