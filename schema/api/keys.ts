/** Scoped API keys (docs/agent-safety.md): minting from a key (`POST /v1/keys`) and from the admin API. */
import { z } from 'zod'
import { KEY_SCOPES } from '../d1'
import { DateTime, SuccessFlag } from './common'

const MAX_REPLY_WINDOW_S = 30 * 86_400

/** The fields that narrow a key; every one is optional and defaults to the minting key's value (admin: a full key). */
export const KeyFields = z.strictObject({
  scope: z
    .enum(KEY_SCOPES)
    .optional()
    .meta({ description: '`full` (everything), `reply` (reads, and sends only to people who wrote within reply_window_s) or `read` (reads only)' }),
  label: z.string().min(1).max(100).optional().meta({ description: 'A name for the key, shown in the key list and the audit log' }),
  accounts: z.array(z.string().min(1).max(64)).min(1).max(100).optional().meta({ description: 'The account ids the key may use; omitted: every account' }),
  expires_at: DateTime.optional().meta({ description: 'After this instant the key answers 403 key_expired' }),
  reply_window_s: z
    .number()
    .int()
    .min(60)
    .max(MAX_REPLY_WINDOW_S)
    .optional()
    .meta({ description: 'reply keys: how long after a person’s last message they may be answered; default 86400 (24 h)' }),
  approval: z
    .boolean()
    .optional()
    .meta({ description: 'Hold a send to anyone who never wrote to the account as awaiting_approval until the owner approves it' }),
})
export type KeyFields = z.infer<typeof KeyFields>

export const KeyView = z
  .object({
    id: z.string(),
    prefix: z.string().meta({ description: 'The first characters of the key, for recognising it' }),
    label: z.string().nullable(),
    scope: z.enum(KEY_SCOPES),
    accounts: z.array(z.string()).nullable().meta({ description: 'null: every account' }),
    expires_at: DateTime.nullable(),
    reply_window_s: z.number().int(),
    approval: z.boolean(),
    parent_id: z.string().nullable().meta({ description: 'The key that minted this one; null when the admin API issued it' }),
    created_at: DateTime,
  })
  .meta({ id: 'ApiKey' })

export const MintedKey = KeyView.extend({
  success: SuccessFlag,
  key: z.string().meta({ description: 'Shown once; only its hash is stored' }),
}).meta({ id: 'MintedKey' })

export const KeyList = z.object({ success: SuccessFlag, keys: z.array(KeyView) }).meta({ id: 'ApiKeyList' })
export const KeyIdPath = z.object({ keyId: z.string().min(1).max(64) })
