/**
 * A provider's inbound message as its webhook hands it to the AccountDO's queue (account/inbound-queue.ts): the shape
 * the Worker builds and the object stores, and the upstream id of each attachment's message, which the phone's MMS
 * webhook also uses to store inline files. Shapes and pure functions only, so both sides import it.
 */
import { z } from 'zod'
import { CHANNELS, MEDIA_KINDS } from '../../schema/d1'

export const Attachment = z.object({
  url: z.string().min(1).max(4096),
  /** The provider's type for it (MediaContentTypeN; Graph's attachment type as `image/*`). */
  contentType: z.string().max(200).nullable(),
  fileName: z.string().max(512).nullable(),
  kind: z.enum(MEDIA_KINDS).nullable(),
  /**
   * Put into the store by the webhook already, under its part's id (the phone sends files inline, media/ingest-inline.ts):
   * nothing to fetch, and no row means the provider sent no bytes for it (stored as unavailable).
   */
  stored: z.boolean().optional(),
})
export type Attachment = z.infer<typeof Attachment>

const Seed = z.object({
  id: z.string(),
  tenantId: z.string(),
  accountId: z.string(),
  channel: z.enum(CHANNELS),
  phone: z.string().nullish(),
  externalId: z.string().nullish(),
  socialId: z.string().nullish(),
  peerId: z.string().nullish(),
  name: z.string().nullish(),
})

export const QueuedInbound = z.object({
  contact: Seed,
  text: z.string(),
  upstreamId: z.string().min(1),
  attachments: z.array(Attachment).max(10),
  /** Where `media.url` points (the service's public origin when the webhook arrived). */
  origin: z.string(),
  /** An opt-out the provider decided (Twilio's OptOutType), applied once the message is stored. */
  optOut: z.enum(['stop', 'start']).nullable(),
  /** The provider's id of the message this one quotes (the page inbox's `reply_to.mid`; issue 25). */
  replyTo: z.string().min(1).max(512).nullish(),
})
export type QueuedInbound = z.infer<typeof QueuedInbound>

/** The upstream id of the message carrying attachment `i`: the provider's id for the first, `{id}/{i}` after. */
export function partUpstreamId(upstreamId: string, i: number): string {
  return i === 0 ? upstreamId : `${upstreamId}/${i}`
}
