/** A stored key as the API shows it (never its hash), and the key fields of a request as a grant request. */
import type { KeyFields } from '../../schema/api/keys'
import { grantOf, type KeyRow } from '../db/api-keys'
import { isoOrNull, iso } from '../lib/time'
import type { KeyRequest } from './grant'

export function keyView(row: KeyRow) {
  const g = grantOf(row)
  return {
    id: row.id,
    prefix: row.prefix,
    label: g.label,
    scope: g.scope,
    accounts: g.accounts,
    expires_at: isoOrNull(g.expiresAt),
    reply_window_s: g.replyWindowS,
    approval: g.approval,
    parent_id: row.parentId,
    created_at: iso(row.createdAt),
  }
}

export function keyRequest(f: KeyFields): KeyRequest {
  return {
    scope: f.scope,
    label: f.label,
    accounts: f.accounts,
    expiresAt: f.expires_at === undefined ? undefined : Date.parse(f.expires_at),
    replyWindowS: f.reply_window_s,
    approval: f.approval,
  }
}
