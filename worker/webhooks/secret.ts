/**
 * A subscription's signing secret at rest: sealed (lib/sealed.ts) for its own row, so it opens for no other
 * subscription or tenant. Kept apart from signing.ts, which the receivers' test code imports without the config.
 */
import { keyring } from '../config'
import { seal, unseal, type SealedAt } from '../lib/sealed'

function secretAt(tenantId: string, webhookId: string): SealedAt {
  return { column: 'webhooks.signing_secret', tenantId, rowId: webhookId }
}

/** The signing secret sealed for its subscription's row: it opens nowhere else. */
export function sealSigningSecret(env: Env, tenantId: string, webhookId: string, secret: string): Promise<string> {
  return seal(keyring(env), secretAt(tenantId, webhookId), secret)
}

export async function unsealSecret(env: Env, row: { id: string; tenantId: string; signingSecret: string | null }): Promise<string | null> {
  return row.signingSecret === null ? null : unseal(keyring(env), secretAt(row.tenantId, row.id), row.signingSecret)
}
