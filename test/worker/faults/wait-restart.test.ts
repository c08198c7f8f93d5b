/**
 * An AccountDO restarted while long-poll waits are open (issue 14 §6): the runtime resets the object (as a deploy or
 * a crash does) under two open waits; each client still gets its answer (the wait is held again by the new instance
 * for the time left), a message pushed right after the restart is in it, and the next wait neither repeats nor skips.
 */
import { runInDurableObject } from 'cloudflare:test'
import { env } from 'cloudflare:workers'
import { describe, expect, it } from 'vitest'
import { accountStub } from '../../../worker/lib/objects'
import { body, call, connectCustom, newTenant, pushInbound, type TestTenant, type WireMessageBody } from '../helpers'
import { addAccount, untilOpenWaits } from '../state'

type WaitBody = { messages: WireMessageBody[]; cursor: string }

async function wait(t: TestTenant, query: string) {
  const res = await call(`/v1/messages/wait?${query}`, { key: t.key })
  return { status: res.status, body: await body<WaitBody>(res) }
}

/** Resets the account's object the way the runtime does on a restart: in-memory state gone, open requests broken. */
async function restart(t: TestTenant, accountId: string) {
  await runInDurableObject(accountStub(env, t.tenantId, accountId), (_instance, state) => state.abort('restarted by the test')).catch(() => undefined)
}

describe('GET /v1/messages/wait across an AccountDO restart', () => {
  it('answers both open waits with the message pushed after the restart, and the next wait goes on from there', async () => {
    const t = await newTenant()
    await connectCustom(t)
    const cursor = (await wait(t, 'timeout_s=0')).body.cursor
    const a = wait(t, `cursor=${cursor}&timeout_s=20`)
    const b = wait(t, `cursor=${cursor}&timeout_s=20`)
    await untilOpenWaits(t.tenantId, 'custom', 2)

    await restart(t, 'custom')
    // Both waits are held again by the new instance before the message comes (they would have no slot otherwise).
    await untilOpenWaits(t.tenantId, 'custom', 2)
    const pushed = await pushInbound(t, { body: 'after the restart', fromId: 'r1' })
    expect(pushed.status).toBe(200)

    const [ra, rb] = await Promise.all([a, b])
    for (const r of [ra, rb]) {
      expect(r.status).toBe(200)
      expect(r.body.messages.map((m) => m.id)).toEqual([pushed.body.message_id])
    }
    const later = await pushInbound(t, { body: 'the next one', fromId: 'r1' })
    const next = await wait(t, `cursor=${ra.body.cursor}&timeout_s=5`)
    expect(next.body.messages.map((m) => m.id)).toEqual([later.body.message_id])
  })

  it('answers a wait over several accounts when one of their objects restarts', async () => {
    const t = await newTenant()
    await connectCustom(t)
    const other = await addAccount(t.tenantId, { id: '+15550007001', channel: 'sms' })
    const cursor = (await wait(t, 'timeout_s=0')).body.cursor
    const pending = wait(t, `cursor=${cursor}&timeout_s=20`)
    await untilOpenWaits(t.tenantId, 'custom', 1)
    await untilOpenWaits(t.tenantId, other.accountId, 1)
    await restart(t, 'custom')
    await untilOpenWaits(t.tenantId, 'custom', 1)
    const pushed = await pushInbound(t, { body: 'to the restarted one', fromId: 'r2' })
    const r = await pending
    expect(r.status).toBe(200)
    expect(r.body.messages.map((m) => m.id)).toEqual([pushed.body.message_id])
  })
})
