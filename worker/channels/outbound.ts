/**
 * What every outbound channel answers for one delivery attempt. The AccountDO turns it into the message's
 * status (`sent` / `failed`) and the matching event. A relay channel answers `pending`: the message was handed to
 * the relay (or waits for one) and its outcome arrives later as a frame (account/relay-outbound.ts).
 */
import type { MessageWithContact } from '../db/messages'

export type DeliveryResult =
  | { ok: true; upstreamId?: string }
  | { ok: false; code: number | null; error: string }
  | { retry: true; at: number; error: string }
  | { pending: true }

export type OutboundChannel = (row: MessageWithContact) => Promise<DeliveryResult>
