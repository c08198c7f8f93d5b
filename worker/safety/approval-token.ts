/**
 * The signed link of a held message (docs/agent-safety.md): names tenant and message, valid until the approval
 * expires. One token serves the page and both decisions; the page posts it back with the decision.
 */
import { z } from 'zod'
import { encryptionKey, publicOrigin } from '../config'
import { signToken, verifyToken, type TokenCheck } from '../lib/signed-token'

const PURPOSE = 'message-approval'
export const APPROVAL_PAGE_PATH = '/approvals'

export const ApprovalClaims = z.object({ tenant: z.string(), message: z.string() })
export type ApprovalClaims = z.infer<typeof ApprovalClaims>

export type ApprovalLinks = { page_url: string; approve_url: string; reject_url: string }

export async function approvalLinks(env: Env, requestUrl: string, claims: ApprovalClaims, expiresAt: number): Promise<ApprovalLinks> {
  const token = encodeURIComponent(await signToken(encryptionKey(env), PURPOSE, claims, expiresAt))
  const page = `${publicOrigin(env, requestUrl)}${APPROVAL_PAGE_PATH}?token=${token}`
  return { page_url: page, approve_url: `${page}&decision=approve`, reject_url: `${page}&decision=reject` }
}

export function readApprovalToken(env: Env, token: string, now: number): Promise<TokenCheck<ApprovalClaims>> {
  return verifyToken(encryptionKey(env), PURPOSE, token, ApprovalClaims, now)
}
