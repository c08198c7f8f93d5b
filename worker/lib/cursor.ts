/**
 * Opaque cursors over the message sequence (and the audit log's, and the event outbox's for MCP events). A list
 * cursor and a wait cursor are told apart, so passing one where the other belongs is a clear 400 instead of a
 * silently wrong page.
 */
import { base64urlText, fromBase64urlText } from './base64url'

export type CursorKind = 'list' | 'wait' | 'audit' | 'event'

const TAG: Record<CursorKind, string> = { list: 'l1', wait: 'w1', audit: 'a1', event: 'e1' }

export function encodeCursor(kind: CursorKind, seq: number): string {
  return base64urlText(`${TAG[kind]}:${seq}`)
}

/** The sequence number inside a cursor, or null when it is not a cursor of this kind. */
export function decodeCursor(kind: CursorKind, raw: string): number | null {
  const text = fromBase64urlText(raw)
  const match = text === null ? null : /^([a-z]\d):(\d{1,15})$/.exec(text)
  if (!match || match[1] !== TAG[kind]) return null
  return Number(match[2])
}
