/**
 * What one API key may do (docs/agent-safety.md): its scope, the accounts it may use, its expiry, the reply window
 * of a `reply` key and whether its first messages wait for the owner's approval. Plain rules over a clock, so the
 * minting and expiry rules are tested without the runtime.
 */
import type { KeyScope } from '../../schema/d1'
import { DEFAULT_REPLY_WINDOW_S } from '../db/api-keys'
import type { KeyGrant } from '../env'

// Declared in env.ts (a request carries it, and that layer is below this one); the rules here are about it.
export type { KeyGrant }
/** How long an approval link (and the held message) stays open before the message fails with `approval_expired`. */
export const APPROVAL_TTL_MS = 24 * 3600_000

/** Today's keys: the grant of every key issued before scopes existed, and of every admin key issued without fields. */
export function fullGrant(id: string): KeyGrant {
  return { id, label: null, scope: 'full', accounts: null, expiresAt: null, replyWindowS: DEFAULT_REPLY_WINDOW_S, approval: false }
}

/** A key exactly like today's: full, every account, no expiry, no approval, no label. */
export function isDefaultGrant(g: KeyGrant): boolean {
  return g.scope === 'full' && g.accounts === null && g.expiresAt === null && !g.approval && g.label === null
}

/**
 * The owner's key (docs/agent-safety.md, threat model): full, every account, no approval and no expiry. Only it (or
 * the admin token) manages keys and webhooks, connects channels, pushes custom-channel inbound and decides held
 * messages. An expiring key is not the owner's: what it set up (a webhook, a channel) would outlive it.
 */
export function isOwnerGrant(g: KeyGrant): boolean {
  return g.scope === 'full' && g.accounts === null && !g.approval && g.expiresAt === null
}

const RANK: Record<KeyScope, number> = { read: 0, reply: 1, full: 2 }

/** Whether a key of scope `held` may do what `needed` allows. */
export function scopeCovers(held: KeyScope, needed: KeyScope): boolean {
  return RANK[held] >= RANK[needed]
}

export function isExpired(grant: KeyGrant, now: number): boolean {
  return grant.expiresAt !== null && grant.expiresAt <= now
}

export function accountAllowed(grant: KeyGrant, accountId: string): boolean {
  return grant.accounts === null || grant.accounts.includes(accountId)
}

/** The fields a new key asks for; omitted ones inherit the parent's (never widen it). */
export type KeyRequest = {
  scope?: KeyScope
  label?: string | null
  accounts?: string[] | null
  expiresAt?: number | null
  replyWindowS?: number | null
  approval?: boolean
}

export type MintCheck = { ok: true; grant: Omit<KeyGrant, 'id'> } | { ok: false; message: string }

/**
 * A key can never mint a wider key than itself: the scope at most its own, the accounts a subset of its own,
 * an expiry no later than its own, a reply window no longer than its own, and approval kept on if it has it.
 * Omitted fields take the parent's value, so a bare request mints a copy.
 */
export function mintFrom(parent: KeyGrant, req: KeyRequest, now: number): MintCheck {
  const scope = req.scope ?? parent.scope
  if (!scopeCovers(parent.scope, scope)) return { ok: false, message: `a ${parent.scope} key cannot mint a ${scope} key` }
  const accounts = req.accounts === undefined ? parent.accounts : req.accounts
  if (parent.accounts !== null) {
    if (accounts === null) return { ok: false, message: `this key is limited to ${parent.accounts.join(', ')}; name accounts among them` }
    const outside = accounts.filter((a) => !parent.accounts!.includes(a))
    if (outside.length) return { ok: false, message: `this key may not use ${outside.join(', ')}` }
  }
  const expiresAt = req.expiresAt === undefined ? parent.expiresAt : req.expiresAt
  if (expiresAt !== null && expiresAt <= now) return { ok: false, message: 'expires_at must be in the future' }
  if (parent.expiresAt !== null && (expiresAt === null || expiresAt > parent.expiresAt)) {
    return { ok: false, message: `the new key must expire no later than this key (${new Date(parent.expiresAt).toISOString()})` }
  }
  const replyWindowS = req.replyWindowS ?? parent.replyWindowS
  if (parent.scope === 'reply' && replyWindowS > parent.replyWindowS) {
    return { ok: false, message: `reply_window_s may be at most this key's ${parent.replyWindowS}` }
  }
  const approval = req.approval ?? parent.approval
  if (parent.approval && !approval) return { ok: false, message: 'this key holds first messages for approval; a key it mints must too' }
  return { ok: true, grant: { label: req.label ?? null, scope, accounts, expiresAt, replyWindowS, approval } }
}
