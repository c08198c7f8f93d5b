/** The delivery log's opaque cursor: the (event time, delivery id) of the last row shown, newest-first order. */
import type { DeliveryRow } from '../db/webhook-deliveries'
import { base64urlText, fromBase64urlText } from '../lib/base64url'

const TAG = 'd1'

export function encodeLogCursor(row: Pick<DeliveryRow, 'createdAt' | 'id'>): string {
  return base64urlText(`${TAG}:${row.createdAt}:${row.id}`)
}

/** The position inside a cursor, or null when it is not one of ours. */
export function decodeLogCursor(raw: string): { createdAt: number; id: string } | null {
  const text = fromBase64urlText(raw)
  if (text === null) return null
  const match = /^d1:(\d{1,15}):(dlv_[0-9A-Za-z]{44})$/.exec(text)
  return match ? { createdAt: Number(match[1]), id: match[2]! } : null
}
