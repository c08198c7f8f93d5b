/** A message a bridge pushes in (spec 4.7 `customData`) as the AccountDO's inbound input: the sender becomes a contact keyed by `fromId`. */
import type { z } from 'zod'
import type { CustomInboundBody } from '../../../schema/api/custom-channel'
import type { InboundInput } from '../../account/ingest'
import { contactIdFor } from '../../lib/ids'
import { CUSTOM_ACCOUNT_ID } from './config'

export const customRef = (tenantId: string) => ({ tenantId, accountId: CUSTOM_ACCOUNT_ID, channel: 'custom' as const })

export async function customInbound(tenantId: string, d: z.infer<typeof CustomInboundBody>['customData']): Promise<InboundInput> {
  return {
    ref: customRef(tenantId),
    contact: {
      id: await contactIdFor(tenantId, CUSTOM_ACCOUNT_ID, { kind: 'external', value: d.fromId }),
      tenantId,
      accountId: CUSTOM_ACCOUNT_ID,
      channel: 'custom',
      externalId: d.fromId,
      firstName: d.firstName ?? null,
      lastName: d.lastName ?? null,
      email: d.email ?? null,
    },
    text: d.body,
    mediaUrl: d.mediaUrl ?? null,
    mediaContentType: d.mediaContentType ?? null,
    upstreamId: d.messageSid ?? null,
  }
}
