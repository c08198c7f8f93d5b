/**
 * alpha's REST routes, /v1/channels/alpha-web (spec 4.3): link an alpha number through the relay (QR or pairing code), read its QR and
 * status, disconnect it. Errors take the channel-connection shape `{success: false, error, error_code: <status>}`.
 */
import { createRoute } from '@hono/zod-openapi'
import { IdempotencyKeyHeader } from '../../../schema/api/common'
import { AlphaConnectBody, AlphaConnectResult, AlphaDisconnected, AlphaPhoneParam, AlphaQr, AlphaStatus } from '../../../schema/api/alpha'
import { findRelayAccount, relayAccount, removeRelayAccount } from '../relay-run/account'
import { sessionStatus } from '../relay-run/session'
import { ALPHA, startLink } from './connect'
import { ALPHA_PAGE } from './connect-token'
import { getAccount } from '../../db/accounts'
import { countAccountMessages } from '../../db/messages'
import { NO_SESSION_VIEW } from '../../account/session/pairing.shared'
import { qrDataUrl } from '../../lib/qr-png'
import { isoOrNull } from '../../lib/time'
import { resourceApp } from '../../validate'
import { statusErrors } from '../../lib/openapi-responses'
import { connectLimits } from '../../lib/rate-limit'

export const alphaRoutes = resourceApp()

const errors = (codes: number[]) => statusErrors(codes)

const PhonePath = AlphaPhoneParam

const pollPaths = (phone: string) => {
  const p = `/channels/alpha-web/connections/${encodeURIComponent(phone)}`
  return { poll_qr_path: `${p}/qr`, poll_status_path: `${p}/status` }
}

alphaRoutes.openapi(
  createRoute({
    method: 'post',
    path: '/connections',
    operationId: 'connect_alpha',
    tags: ['alpha channel'],
    summary: 'Link an alpha number',
    description: [
      'Starts linking the user’s alpha number as a linked device and returns a connect_url page where the user scans the QR on their phone (or an 8-character code with link_method pairing_code). Only the user can complete it; then poll get_alpha_status until connected.',
      [
        'The account is listed as `connecting` at once (warm-up `ramp_day` 1) and',
        'counts against the plan’s account cap. Show `connect_url` to the user (a hosted page with a self-refreshing QR code or the',
        'pairing code and a success state; no login), or poll `poll_qr_path` every 10 to 15 s and `poll_status_path` until',
        '`connected`. With `link_method: pairing_code` the answer carries the 8-character `pairing_code` to type on the phone',
        '(Linked devices → Link with phone number). If the phone demands a passkey, the status says `connecting` with reason',
        '`passkey_required` and `connect_url` walks the owner through it (a helper on web.whatsapp.com, docs/channels/alpha.md), when',
        'the tenant has `alpha_passkey_linking`; without it, `disconnected` with reason `passkey_required` instead of cycling QR codes.',
        'Calling it again restarts linking (a new QR code, and it cancels a passkey ceremony); for a number that is',
        'already connected it changes nothing unless `force_new` discards the stored session.',
      ].join(' '),
    ].join('\n\n'),
    request: { headers: IdempotencyKeyHeader, body: { required: true, content: { 'application/json': { schema: AlphaConnectBody } } } },
    responses: {
      200: { description: 'Linking started', content: { 'application/json': { schema: AlphaConnectResult } } },
      ...errors([400, 401, 409, 422, 429]),
    },
  }),
  async (c) => {
    const body = c.req.valid('json')
    const tenant = c.get('tenant')
    const db = c.var.db
    const phone = body.phone_number
    await connectLimits(c, tenant.id, phone, body.link_method)
    const existing = await getAccount(db, tenant.id, phone)
    const base = { success: true as const, phone_number: phone, link_method: body.link_method, ...pollPaths(phone) }

    if (existing?.channel === 'alpha_web' && existing.status === 'connected' && !body.force_new) {
      const { record } = await sessionStatus(c.env, tenant.id, phone)
      return c.json(
        {
          ...base,
          session_id: record?.sid ?? '',
          status: 'connected' as const,
          pairing_code: null,
          pairing_code_expires_at: null,
          connect_url: null,
          connect_url_expires_at: null,
          reason: null,
          message: 'Already connected; pass force_new to link again',
        },
        200
      )
    }
    const outcome = await startLink(c.env, db, tenant, phone, {
      linkMethod: body.link_method,
      forceNew: body.force_new,
      options: {
        importContacts: body.import_contacts,
        pauseAiForImportedContacts: body.pause_ai_for_imported_contacts,
        importExistingChats: body.import_existing_chats,
        markImportedContactsAsPrivate: body.mark_imported_contacts_as_private,
      },
    })
    const page = await ALPHA_PAGE.link(c.env, c.req.url, { tenant: tenant.id, account: phone }, Date.now())
    const v = outcome.view
    return c.json(
      {
        ...base,
        session_id: outcome.sid,
        status: v.status === 'connected' ? ('connected' as const) : ('qr_pending' as const),
        pairing_code: v.pairingCode,
        pairing_code_expires_at: isoOrNull(v.pairingCodeExpiresAt),
        connect_url: page.url,
        connect_url_expires_at: page.expiresAt,
        reason: v.reason,
        message: v.message,
      },
      200
    )
  }
)

alphaRoutes.openapi(
  createRoute({
    method: 'get',
    path: '/connections/{phoneNumber}/qr',
    operationId: 'get_alpha_qr',
    tags: ['alpha channel'],
    summary: 'Get the alpha QR code',
    description: [
      'Returns the current QR code of an alpha link in progress; it expires quickly, so fetch a fresh one every 10 to 15 seconds while the user scans.',
      'The QR code to scan under Linked devices, raw (`qr_code`) and as a PNG data URL. It is short-lived: poll every 10 to 15 s; `expires_at` says when it lapses. With a pairing code, `pairing_code` is set instead.',
    ].join('\n\n'),
    request: { params: PhonePath },
    responses: {
      200: { description: 'The QR code (null while none is pending)', content: { 'application/json': { schema: AlphaQr } } },
      ...errors([400, 401, 404]),
    },
  }),
  async (c) => {
    const { phoneNumber: phone } = c.req.valid('param')
    const tenant = c.get('tenant')
    await relayAccount(c.var.db, ALPHA, tenant.id, phone)
    const { view: v } = await sessionStatus(c.env, tenant.id, phone)
    return c.json(
      {
        success: true as const,
        phone_number: phone,
        status: v.status,
        qr_code: v.qr,
        qr_data_url: v.qr ? await qrDataUrl(v.qr) : null,
        expires_at: isoOrNull(v.qrExpiresAt),
        pairing_code: v.pairingCode,
        pairing_code_expires_at: isoOrNull(v.pairingCodeExpiresAt),
      },
      200
    )
  }
)

alphaRoutes.openapi(
  createRoute({
    method: 'get',
    path: '/connections/{phoneNumber}/status',
    operationId: 'get_alpha_status',
    tags: ['alpha channel'],
    summary: 'Get the alpha link status',
    description: [
      'Reports an alpha link: connected (or open) is done; qr_pending and connecting are in progress, and connecting with reason passkey_required or passkey_code means tell the owner its message (the passkey step, on the connect_url page on a computer). disconnected or not_initialized: call connect_alpha again, except for blocked_by_alpha or a passkey_* reason: tell the user instead.',
      '`connected` (or `open`) is success; `disconnected` and `not_initialized` (no session exists: a number never connected here, or removed) are terminal failures with `reason` (logged_out, blocked_by_alpha, replaced, passkey_required, passkey_expired, passkey_rejected, passkey_timeout, link_expired, …); `qr_pending` and `connecting` are transitional (`connecting` with reason `passkey_required` or `passkey_code`: the owner is doing the passkey step on the connect page; `message` says what to tell them). `live` is true when the relay running the session answered just now.',
    ].join('\n\n'),
    request: { params: PhonePath },
    responses: { 200: { description: 'The status', content: { 'application/json': { schema: AlphaStatus } } }, ...errors([400, 401]) },
  }),
  async (c) => {
    const { phoneNumber: phone } = c.req.valid('param')
    const tenant = c.get('tenant')
    const db = c.var.db
    const account = await findRelayAccount(db, ALPHA, tenant.id, phone)
    // No session exists for a number that is not on the account (never connected, or removed): spec part 3's
    // `not_initialized`, answered without waking an AccountDO for it.
    const [{ record, view: v, live }, count] = account
      ? await Promise.all([sessionStatus(c.env, tenant.id, phone, true), countAccountMessages(db, tenant.id, phone)])
      : [{ record: undefined, view: NO_SESSION_VIEW, live: false }, null]
    return c.json(
      {
        success: true as const,
        phone_number: phone,
        session_id: record?.sid ?? null,
        status: v.status,
        account_status: account?.status ?? null,
        // The account's own reason wins when the account is stopped (e.g. relay_unavailable while the link looks connected).
        reason: v.reason ?? (!account || account.status === 'connected' || account.status === 'connecting' ? null : account.statusReason),
        message: v.message,
        has_qr: v.qr !== null,
        qr_expires_at: isoOrNull(v.qrExpiresAt),
        pairing_code: v.pairingCode,
        pairing_code_expires_at: isoOrNull(v.pairingCodeExpiresAt),
        last_activity: isoOrNull(record?.lastActivityAt),
        message_count: count,
        proxy: null,
        live,
      },
      200
    )
  }
)

alphaRoutes.openapi(
  createRoute({
    method: 'delete',
    path: '/connections/{phoneNumber}',
    operationId: 'disconnect_alpha',
    tags: ['alpha channel'],
    summary: 'Unlink an alpha number',
    description: [
      'Unlinks the alpha number and removes it from the service, so sending and receiving on it stop; ask the user first. Idempotent.',
      'Logs the linked device out (through the relay, when one is reachable) and removes the number from the account: `removed`. Messages still queued fail; history stays. Idempotent: a number that is not on the account answers `disconnected`. Succeeds even when no relay is reachable.',
    ].join('\n\n'),
    request: { params: PhonePath },
    responses: { 200: { description: 'Removed', content: { 'application/json': { schema: AlphaDisconnected } } }, ...errors([400, 401]) },
  }),
  async (c) => {
    const { phoneNumber: phone } = c.req.valid('param')
    const removed = await removeRelayAccount(c.env, c.var.db, ALPHA, c.get('tenant').id, phone)
    return c.json({ success: true as const, phone_number: phone, status: removed ? ('removed' as const) : ('disconnected' as const) }, 200)
  }
)
