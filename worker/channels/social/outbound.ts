/**
 * Delivery on the page inbox: the Send API with the page's token, to the person's scoped id, on the surface they
 * wrote on (page or linked Instagram account; one Page token serves both). Graph's refusals land in the message's
 * `error` with Graph's code; a token Graph no longer accepts (code 190) also turns the account `disconnected`, and a
 * send blocked as abusive (368) is a ban-risk signal. Quoted replies go with `reply_to`, and reactions, typing and the
 * seen mark are the Send API's sender actions (issue 25).
 */
import type { AccountContext, ActionResult, ChannelAction, DeliveryResult } from '../../account/context'
import { recordRisk } from '../../account/risk'
import type { AccountRef } from '../../account/storage'
import { keyring } from '../../config'
import { statusChange } from '../../events/account-status'
import { getAccount } from '../../db/accounts'
import { getContact } from '../../db/contacts'
import { ApiError } from '../../errors'
import { quotedMessages, type MessageWithContact } from '../../db/messages'
import { getSocialPage, socialSealedAt } from '../../db/social'
import { unseal } from '../../lib/sealed'
import { GraphClient, GraphError, OUTSIDE_WINDOW_SUBCODE, POLICY_BLOCK_CODE, RATE_LIMIT_CODES, type OutboundContent, type SenderAction } from './graph-client'
import { checkWindow } from './window'

/** The reason an account carries once Graph refused its token. */
export const TOKEN_REVOKED = 'token_revoked'

function attachmentType(contentType: string | null): 'image' | 'video' | 'audio' | 'file' {
  if (contentType?.startsWith('image/')) return 'image'
  if (contentType?.startsWith('video/')) return 'video'
  if (contentType?.startsWith('audio/')) return 'audio'
  return 'file'
}

/** The connected page and its token, or why the account cannot reach Graph. */
async function pageAndToken(c: AccountContext, ref: AccountRef): Promise<{ pageId: string; token: string } | null> {
  const page = await getSocialPage(c.db, ref.tenantId, ref.accountId)
  if (!page) return null
  return { pageId: page.pageId, token: await unseal(keyring(c.env), socialSealedAt.pageToken(page.tenantId, page.accountId), page.token) }
}

/** What a Graph refusal does to the account: a revoked token disconnects it, a policy block is a ban-risk signal. */
async function onGraphError(c: AccountContext, ref: AccountRef, err: GraphError): Promise<void> {
  if (err.tokenInvalid) await markRevoked(c, ref, err.message)
  if (err.code === POLICY_BLOCK_CODE) await recordRisk(c, ref, { signal: 'policy_block', active: true, until: null, detail: err.message }, Date.now())
}

export async function deliverSocial(c: AccountContext, ref: AccountRef, row: MessageWithContact, graph = new GraphClient(c.env)): Promise<DeliveryResult> {
  const page = await pageAndToken(c, ref)
  if (!page) return { ok: false, code: null, error: 'the page inbox is not connected' }
  const recipient = row.contact?.socialId
  if (!recipient) return { ok: false, code: null, error: 'the recipient has no page-scoped id' }
  // A quoted reply (issue 25) names the message it answers by Graph's id for it, on its first part.
  const quoted = row.message.replyTo ? (await quotedMessages(c.db, ref.tenantId, [row.message.replyTo])).get(row.message.replyTo) : undefined
  let replyTo = quoted?.upstreamId ?? null
  // Graph carries text or one attachment per message: an attachment goes first, its caption after it.
  const parts: OutboundContent[] = []
  if (row.message.mediaUrl) parts.push({ attachment: { type: attachmentType(row.message.mediaContentType), url: row.message.mediaUrl } })
  if (row.message.text) parts.push({ text: row.message.text })
  let upstreamId: string | undefined
  try {
    for (const part of parts) {
      upstreamId = (await graph.send(page.pageId, page.token, recipient, part, replyTo)).message_id
      replyTo = null
    }
  } catch (err) {
    if (!(err instanceof GraphError)) throw err
    await onGraphError(c, ref, err)
    return { ok: false, code: err.code, error: err.message }
  }
  return { ok: true, upstreamId }
}

function senderAction(a: ChannelAction): SenderAction | null {
  switch (a.kind) {
    case 'typing':
      return { action: 'typing_on' }
    case 'read':
      // Messenger's seen mark covers the whole conversation up to now.
      return { action: 'mark_seen' }
    case 'react':
      if (!a.target.upstreamId) return null
      return a.emoji === null ? { action: 'unreact', mid: a.target.upstreamId } : { action: 'react', mid: a.target.upstreamId, emoji: a.emoji }
    case 'lookup':
      return null
  }
}

/** Chat actions on the page inbox (issue 25): the Send API's sender actions, to the person's scoped id. */
export async function actSocial(c: AccountContext, ref: AccountRef, action: ChannelAction, graph = new GraphClient(c.env)): Promise<ActionResult> {
  const a = senderAction(action)
  if (!a || action.kind === 'lookup') return { ok: false, status: 422, code: 'unsupported_on_channel', message: 'The page inbox cannot do this' }
  const page = await pageAndToken(c, ref)
  if (!page) return { ok: false, status: 409, code: 'account_not_connected', message: 'The page inbox is not connected' }
  const recipient = action.contact.socialId
  if (!recipient) return { ok: false, status: 422, code: 'action_refused', message: 'The person has no page-scoped id' }
  // Sender actions obey the 24-hour window like a send (Graph refuses them after it): refused here as a send is.
  const closed = windowRefusal((await getContact(c.db, ref.tenantId, action.contact.id))?.lastInboundAt ?? null)
  if (closed) return closed
  try {
    await graph.senderAction(page.pageId, page.token, recipient, a)
    return { ok: true }
  } catch (err) {
    if (!(err instanceof GraphError)) throw err
    await onGraphError(c, ref, err)
    if (err.subcode === OUTSIDE_WINDOW_SUBCODE) return { ok: false, status: 409, code: 'outside_window', message: err.message }
    if (err.code !== null && RATE_LIMIT_CODES.includes(err.code)) return { ok: false, status: 429, code: 'rate_limited', message: err.message, retryAfterS: 60 }
    return { ok: false, status: 422, code: 'action_refused', message: `The Graph API refused it: ${err.message}` }
  }
}

/** The send guard's window answer (window.ts) as an action's refusal, or null while the window is open. */
function windowRefusal(lastInboundAt: number | null): (ActionResult & { ok: false }) | null {
  try {
    checkWindow(lastInboundAt, Date.now())
    return null
  } catch (err) {
    if (!(err instanceof ApiError)) throw err
    return { ok: false, status: 409, code: err.code, message: err.message }
  }
}

/** The user removed the app or lost the page: the account is disconnected once, with `account.disconnected`. */
async function markRevoked(c: AccountContext, ref: AccountRef, detail: string): Promise<void> {
  const account = await getAccount(c.db, ref.tenantId, ref.accountId)
  if (!account || account.status === 'disconnected') return
  console.warn(JSON.stringify({ component: 'social', event: 'token_revoked', account: ref.accountId, detail }))
  const [first, ...rest] = statusChange(c.db, account, 'disconnected', TOKEN_REVOKED, Date.now()).statements
  if (first) await c.commit([first, ...rest])
}
