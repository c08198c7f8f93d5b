/**
 * Opaque cursors over the message sequence (and the audit log's, and the event outbox's for MCP events). A list
 * cursor and a wait cursor are told apart, so passing one where the other belongs is a clear 400 instead of a
 * silently wrong page.
 *
 * A sequence number counts in one placement of its tenant: a move to another shard stores the tenant's rows there
 * under new numbers (db/cursor-maps.ts). So a cursor names its placement too: `l1:<seq>` in the tenant's first
 * placement (every cursor issued before shards existed reads that way), `l1:<seq>.<placement>` after a move.
 */
import { base64urlText, fromBase64urlText } from './base64url'

export type CursorKind = 'list' | 'wait' | 'audit' | 'event'

/** A place in a tenant's sequence: the number and the placement it counts in. */
export type Position = { seq: number; placement: number }

const TAG: Record<CursorKind, string> = { list: 'l1', wait: 'w1', audit: 'a1', event: 'e1' }

export function encodeCursor(kind: CursorKind, seq: number, placement = 0): string {
  return base64urlText(placement === 0 ? `${TAG[kind]}:${seq}` : `${TAG[kind]}:${seq}.${placement}`)
}

/** The position inside a cursor, or null when it is not a cursor of this kind. */
export function decodeCursor(kind: CursorKind, raw: string): Position | null {
  const text = fromBase64urlText(raw)
  const match = text === null ? null : /^([a-z]\d):(\d{1,15})(?:\.(\d{1,6}))?$/.exec(text)
  if (!match || match[1] !== TAG[kind]) return null
  return { seq: Number(match[2]), placement: match[3] === undefined ? 0 : Number(match[3]) }
}
