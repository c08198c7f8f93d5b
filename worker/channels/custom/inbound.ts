/**
 * A message a bridge pushes in (spec 4.7 `customData`) as the AccountDO's inbound input: the sender becomes a contact
 * keyed by `fromId`. A push may quote a message (`replyTo`) or carry a reaction instead (issue 25).
 */
import type { z } from 'zod'
import { DEFAULT_FROM_ID, type CustomInboundBody } from '../../../schema/api/custom-channel'
import type { InboundInput } from '../../account/ingest'
import type { Db } from '../../db/client'
import { getMessage } from '../../db/messages'
import { ApiError } from '../../errors'
import { contactIdFor } from '../../lib/ids'
import { accountStub } from '../../lib/objects'
import { CUSTOM_ACCOUNT_ID } from './config'

export const customRef = (tenantId: string) => ({ tenantId, accountId: CUSTOM_ACCOUNT_ID, channel: 'custom' as const })

export async function customInbound(tenantId: string, d: z.infer<typeof CustomInboundBody>['customData']): Promise<InboundInput> {
  const fromId = d.fromId ?? DEFAULT_FROM_ID
  return {
    ref: customRef(tenantId),
    contact: {
      id: await contactIdFor(tenantId, CUSTOM_ACCOUNT_ID, { kind: 'external', value: fromId }),
      tenantId,
      accountId: CUSTOM_ACCOUNT_ID,
      channel: 'custom',
      externalId: fromId,
      firstName: d.firstName ?? null,
      lastName: d.lastName ?? null,
      email: d.email ?? null,
    },
    text: d.body,
    mediaUrl: d.mediaUrl ?? null,
    mediaContentType: d.mediaContentType ?? null,
    upstreamId: d.messageSid ?? null,
    replyTo: d.replyTo ?? null,
  }
}

type CustomData = z.infer<typeof CustomInboundBody>['customData']

/**
 * A reaction the bridge pushes: the person (`fromId`) reacted to a message of their chat, named by our id or the
 * bridge's messageSid; it lands on that message and as `message.reaction`.
 */
export async function customReaction(env: Env, db: Db, tenantId: string, d: CustomData, r: NonNullable<CustomData['reaction']>) {
  // The body schema refuses a reaction without fromId; the default sender stands in only for the type.
  const contactId = await contactIdFor(tenantId, CUSTOM_ACCOUNT_ID, { kind: 'external', value: d.fromId ?? DEFAULT_FROM_ID })
  const byId = r.messageId === undefined ? undefined : await getMessage(db, tenantId, r.messageId)
  const upstreamId = r.messageSid ?? byId?.message.upstreamId ?? null
  const known = byId ? byId.message.accountId === CUSTOM_ACCOUNT_ID && byId.message.contactId === contactId : r.messageSid !== undefined
  const target = byId ? { messageId: byId.message.id } : upstreamId ? { upstreamId } : null
  const messageId =
    known && target
      ? await accountStub(env, tenantId, CUSTOM_ACCOUNT_ID).reaction(customRef(tenantId), { ...target, emoji: r.emoji || null, at: Date.now() })
      : null
  if (messageId === null) throw new ApiError(404, 'message_not_found', `No message of ${d.fromId}'s chat is ${r.messageId ?? r.messageSid}`)
  return { success: true as const, message_id: messageId, contact_id: contactId, duplicate: false, reaction: 'applied' as const }
}
