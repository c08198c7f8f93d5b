/**
 * Delivery on the page inbox: the Send API with the page's token, to the person's scoped id, on the surface they
 * wrote on (page or linked Instagram account; one Page token serves both). Graph's refusals land in the message's
 * `error` with Graph's code; a token Graph no longer accepts (code 190) also turns the account `disconnected`.
 */
import type { AccountContext, DeliveryResult } from '../../account/context'
import type { AccountRef } from '../../account/storage'
import { keyring } from '../../config'
import { statusChange } from '../../events/account-status'
import { getAccount } from '../../db/accounts'
import type { MessageWithContact } from '../../db/messages'
import { getSocialPage, socialSealedAt } from '../../db/social'
import { unseal } from '../../lib/sealed'
import { GraphClient, GraphError, type OutboundContent } from './graph-client'

/** The reason an account carries once Graph refused its token. */
export const TOKEN_REVOKED = 'token_revoked'

function attachmentType(contentType: string | null): 'image' | 'video' | 'audio' | 'file' {
  if (contentType?.startsWith('image/')) return 'image'
  if (contentType?.startsWith('video/')) return 'video'
  if (contentType?.startsWith('audio/')) return 'audio'
  return 'file'
}

export async function deliverSocial(c: AccountContext, ref: AccountRef, row: MessageWithContact, graph = new GraphClient(c.env)): Promise<DeliveryResult> {
  const page = await getSocialPage(c.db, ref.tenantId, ref.accountId)
  if (!page) return { ok: false, code: null, error: 'the page inbox is not connected' }
  const recipient = row.contact?.socialId
  if (!recipient) return { ok: false, code: null, error: 'the recipient has no page-scoped id' }
  const token = await unseal(keyring(c.env), socialSealedAt.pageToken(page.tenantId, page.accountId), page.token)
  // Graph carries text or one attachment per message: an attachment goes first, its caption after it.
  const parts: OutboundContent[] = []
  if (row.message.mediaUrl) parts.push({ attachment: { type: attachmentType(row.message.mediaContentType), url: row.message.mediaUrl } })
  if (row.message.text) parts.push({ text: row.message.text })
  let upstreamId: string | undefined
  try {
    for (const part of parts) upstreamId = (await graph.send(page.pageId, token, recipient, part)).message_id
  } catch (err) {
    if (!(err instanceof GraphError)) throw err
    if (err.tokenInvalid) await markRevoked(c, ref, err.message)
    return { ok: false, code: err.code, error: err.message }
  }
  return { ok: true, upstreamId }
}

/** The user removed the app or lost the page: the account is disconnected once, with `account.disconnected`. */
async function markRevoked(c: AccountContext, ref: AccountRef, detail: string): Promise<void> {
  const account = await getAccount(c.db, ref.tenantId, ref.accountId)
  if (!account || account.status === 'disconnected') return
  console.warn(JSON.stringify({ component: 'social', event: 'token_revoked', account: ref.accountId, detail }))
  const [first, ...rest] = statusChange(c.db, account, 'disconnected', TOKEN_REVOKED, Date.now()).statements
  if (first) await c.commit([first, ...rest])
}
