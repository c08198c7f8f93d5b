/**
 * What every outbound channel answers for one delivery attempt. The AccountDO turns it into the message's
 * status (`sent` / `failed`) and the matching event.
 */
import type { MessageWithContact } from '../db/messages'

export type DeliveryResult =
  | { ok: true; upstreamId?: string }
  | { ok: false; code: number | null; error: string }

export type OutboundChannel = (row: MessageWithContact) => Promise<DeliveryResult>
