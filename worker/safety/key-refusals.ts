/**
 * The refusals of a key's grant (docs/agent-safety.md), in one place for the /v1 middleware and the routes that
 * check the account of what they read: 403 `key_scope` (what the key may do) and `key_account` (which accounts).
 */
import { ApiError } from '../errors'
import { accountAllowed, type KeyGrant } from './grant'
import { scopesAllowing, type GrantRefusal } from './scopes'

export function scopeRefusal(grant: KeyGrant, refusal: GrantRefusal): ApiError {
  if (refusal.code === 'key_account') {
    const list = grant.accounts?.join(', ') ?? ''
    return new ApiError(
      403,
      'key_account',
      `This key is limited to ${list}; ${refusal.what} concerns every account of the tenant, so only a key without an account list may`
    )
  }
  return new ApiError(403, 'key_scope', `This ${describeKey(grant)} may not do this (${refusal.what}); ${scopesAllowing(refusal.needs)} may`)
}

/** `read key`, `full key (with approval, limited to +1555…)`: what makes a key narrower than the owner's. */
function describeKey(grant: KeyGrant): string {
  const narrower = [
    grant.approval ? 'with approval' : '',
    grant.accounts !== null ? `limited to ${grant.accounts.join(', ')}` : '',
    grant.expiresAt !== null ? 'expiring' : '',
  ].filter(Boolean)
  return `${grant.scope} key${narrower.length ? ` (${narrower.join(', ')})` : ''}`
}

export function accountRefusal(accountId: string): ApiError {
  return new ApiError(403, 'key_account', `This key may not use account ${accountId}; a key that lists it (or any account) may`)
}

/**
 * Holds a key to the account of what a route read or resolved. `null`: the item belongs to no account (the page
 * inbox with no page connected), which only a key without an account list may see.
 */
export function checkAccount(grant: KeyGrant, accountId: string | undefined | null, what = 'this'): void {
  if (accountId === null && grant.accounts !== null) throw scopeRefusal(grant, { code: 'key_account', what })
  if (accountId && !accountAllowed(grant, accountId)) throw accountRefusal(accountId)
}
