/**
 * The dry run of a send (issue 25: `dry_run: true` on POST /messages, and POST /messages/check, the MCP tool
 * check_send): the send's own route checks (messaging/send-plan.ts `planSend`) and the AccountDO's own guards
 * (account/send.ts `probeSend`, the same decision `sendMessage` takes) answer what the send would do now, with what is
 * left today. Nothing is sent, stored, counted or logged: the plan only reads, the probe writes no storage, and the
 * audit trail skips it (middleware/audit.ts). A refusal of the key itself (`key_scope`, `key_account`) is answered as
 * the send's 403, as the key check answers a key that may not send at all.
 */
import type { z } from 'zod'
import type { SendCheck } from '../../schema/api/actions'
import type { Refusal } from '../account/guards'
import type { ProbeOutcome } from '../account/send'
import { ApiError } from '../errors'
import { accountStub } from '../lib/objects'
import { planSend, type PlanProgress, type SendPlan, type SendRequest } from './send-plan'

export type SendCheckAnswer = z.infer<typeof SendCheck>

/** Refusals of the key itself: a dry run answers them as the send does (403), not as a verdict. */
const KEY_REFUSALS: ReadonlySet<string> = new Set(['key_scope', 'key_account', 'key_expired'])

/** The error a guard's refusal is answered with: one mapping for the send and its dry run. */
export function refusalError(r: Refusal): ApiError {
  return new ApiError(r.status, r.code, r.message, r.retryAfterS)
}

function errorOf(err: ApiError): NonNullable<SendCheckAnswer['error']> {
  return { status: err.status, error_code: err.code, error: err.message, ...(err.retryAfterS === undefined ? {} : { retry_after_s: err.retryAfterS }) }
}

/** The AccountDO's view of the send: its guards' verdict and what is left, read without writing. */
async function probe(r: SendRequest, progress: PlanProgress): Promise<ProbeOutcome | null> {
  const { tenant, account, contact } = progress
  if (!tenant || !account) return null
  return accountStub(r.env, tenant.id, account.id).probeSend({
    ref: { tenantId: tenant.id, accountId: account.id, channel: account.channel },
    tenant: { plan: tenant.plan, suspended: tenant.status === 'suspended' },
    text: r.body.text,
    contact: contact ?? null,
  })
}

export async function checkSendRequest(r: SendRequest): Promise<SendCheckAnswer> {
  const progress: PlanProgress = {}
  let plan: SendPlan | null = null
  let failure: ApiError | null = null
  try {
    plan = await planSend(r, progress)
  } catch (err) {
    // The key may not send this at all (its accounts, its reply window): refused as the send is, not judged.
    if (!(err instanceof ApiError) || KEY_REFUSALS.has(err.code)) throw err
    failure = err
  }
  const seen = await probe(r, progress)
  const check = seen?.check ?? null
  // The order of the send: its route refuses first, a held send waits for the owner before any guard, then the guards.
  if (!failure && plan && !plan.hold && check && !check.ok) failure = refusalError(check.refusal)
  return {
    dry_run: true,
    verdict: failure ? 'would_fail' : plan?.hold ? 'would_queue_for_approval' : 'would_send',
    error: failure ? errorOf(failure) : null,
    account_id: progress.account?.id ?? null,
    contact_id: progress.contact?.id ?? null,
    new_contact: check?.ok ? check.newContact : (seen?.newContact ?? null),
    allowances: seen?.allowances ?? null,
  }
}
