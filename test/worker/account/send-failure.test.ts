/**
 * A send whose D1 commit fails gives back only its own contribution to the counters and the loop guard: sends
 * accepted while it waited for D1, and a reply that arrived meanwhile, stay counted. The failure is real (a D1
 * trigger aborts the insert of one marked text); the order is made certain by holding the failing send's commit
 * until the other send has committed.
 */
import { runInDurableObject } from 'cloudflare:test'
import { env } from 'cloudflare:workers'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { AccountContext } from '../../../worker/account/context'
import { ingestMessage } from '../../../worker/account/ingest'
import { sendMessage, type SendInput } from '../../../worker/account/send'
import type { AccountRef } from '../../../worker/account/storage'
import { contactIdFor, newId } from '../../../worker/lib/ids'
import { accountStub } from '../../../worker/lib/objects'
import { connectCustom, newTenant } from '../helpers'
import { accountContextOf, messageRow } from '../state'

const FAILING_TEXT = 'this commit is refused by an injected D1 failure'

beforeAll(async () => {
  await env.DB.prepare(
    `CREATE TRIGGER IF NOT EXISTS test_fail_marked_send BEFORE INSERT ON messages WHEN NEW.text = '${FAILING_TEXT}'
     BEGIN SELECT RAISE(ABORT, 'injected D1 failure'); END`
  ).run()
})

afterAll(async () => {
  await env.DB.prepare('DROP TRIGGER IF EXISTS test_fail_marked_send').run()
})

async function customAccount(): Promise<AccountRef> {
  const t = await newTenant()
  await connectCustom(t)
  return { tenantId: t.tenantId, accountId: 'custom', channel: 'custom' }
}

async function sendInput(ref: AccountRef, person: string, text: string): Promise<SendInput> {
  const id = await contactIdFor(ref.tenantId, ref.accountId, { kind: 'external', value: person })
  return {
    ref,
    tenant: { plan: 'free', suspended: false },
    messageId: newId('msg'),
    contact: { id, tenantId: ref.tenantId, accountId: ref.accountId, channel: ref.channel, externalId: person, hasInbound: false },
    text,
    mediaUrl: null,
    mediaContentType: null,
  }
}

/** The object's context whose commits wait for `gate` first, so another send runs while this one is in flight. */
function heldUntil(c: AccountContext, gate: Promise<void>): AccountContext {
  return { ...c, commit: async (statements) => (await gate, c.commit(statements)) }
}

type Gate = { promise: Promise<void>; open(): void }
function gate(): Gate {
  let open = () => {}
  const promise = new Promise<void>((resolve) => {
    open = resolve
  })
  return { promise, open }
}

describe('AccountDO send: a failed D1 commit', () => {
  it('gives back only its own count when a send to another person was accepted meanwhile', async () => {
    const ref = await customAccount()
    const failing = await sendInput(ref, 'first-person', FAILING_TEXT)
    const accepted = await sendInput(ref, 'second-person', 'hello there')
    const after = await runInDurableObject(accountStub(env, ref.tenantId, ref.accountId), async (instance) => {
      const c = await accountContextOf(instance)
      const g = gate()
      const a = sendMessage(heldUntil(c, g.promise), failing)
      const b = await sendMessage(c, accepted)
      g.open()
      await expect(a).rejects.toThrow(/injected D1 failure/)
      return { b, counters: c.store.counters(), failed: c.store.contactGuard(failing.contact.id), kept: c.store.contactGuard(accepted.contact.id) }
    })
    expect(after.b).toMatchObject({ ok: true, messageId: accepted.messageId })
    expect(after.counters).toMatchObject({ sends: 1, newContacts: 1 })
    expect(after.kept).toMatchObject({ sendsSinceInbound: 1, firstSentAt: expect.any(Number) })
    // The person whose message never went out is new again: the next message to them is their opener.
    expect(after.failed).toMatchObject({ sendsSinceInbound: 0, firstSentAt: null })
    expect(await messageRow(failing.messageId)).toBeUndefined()
    expect(await messageRow(accepted.messageId)).toMatchObject({ status: expect.any(String) })
  })

  it('keeps the loop-guard count of a second send to the same person, and the new-contact slot that send now uses', async () => {
    const ref = await customAccount()
    const failing = await sendInput(ref, 'same-person', FAILING_TEXT)
    const accepted = await sendInput(ref, 'same-person', 'second message')
    const after = await runInDurableObject(accountStub(env, ref.tenantId, ref.accountId), async (instance) => {
      const c = await accountContextOf(instance)
      const g = gate()
      const a = sendMessage(heldUntil(c, g.promise), failing)
      await sendMessage(c, accepted)
      g.open()
      await expect(a).rejects.toThrow(/injected D1 failure/)
      return { counters: c.store.counters(), guard: c.store.contactGuard(failing.contact.id) }
    })
    expect(after.counters).toMatchObject({ sends: 1, newContacts: 1 })
    expect(after.guard).toMatchObject({ sendsSinceInbound: 1, firstSentAt: expect.any(Number) })
  })

  it('does not undo a reply that arrived while it was in flight, nor count against the sends after that reply', async () => {
    const ref = await customAccount()
    const failing = await sendInput(ref, 'replier', FAILING_TEXT)
    const accepted = await sendInput(ref, 'replier', 'thanks for writing')
    const after = await runInDurableObject(accountStub(env, ref.tenantId, ref.accountId), async (instance) => {
      const c = await accountContextOf(instance)
      const g = gate()
      const a = sendMessage(heldUntil(c, g.promise), failing)
      const { hasInbound: _, ...seed } = failing.contact
      await ingestMessage(c, {
        ref,
        contact: seed,
        text: 'a reply',
        mediaUrl: null,
        mediaContentType: null,
        upstreamId: null,
      })
      await sendMessage(c, accepted)
      g.open()
      await expect(a).rejects.toThrow(/injected D1 failure/)
      return { counters: c.store.counters(), guard: c.store.contactGuard(failing.contact.id) }
    })
    expect(after.counters).toMatchObject({ sends: 1 })
    expect(after.guard).toMatchObject({ hasInbound: true, sendsSinceInbound: 1 })
  })
})
