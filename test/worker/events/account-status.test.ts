/** An account's status moves with its event: `connected_at` is set only while an account is connected (spec 2 and 3). */
import type { BatchItem } from 'drizzle-orm/batch'
import { describe, expect, it } from 'vitest'
import { getAccount } from '../../../worker/db/accounts'
import { statusChange } from '../../../worker/events/account-status'
import { body, call, newTenant, type TestTenant } from '../helpers'
import { addAccount, db, eventsOf } from '../state'

async function commit(statements: BatchItem<'sqlite'>[]) {
  const [first, ...rest] = statements
  if (first) await db.batch([first, ...rest])
}

async function accountsOf(t: TestTenant) {
  return (await body<{ accounts: { id: string; status: string; connected_at: string | null }[] }>(await call('/v1/accounts', { key: t.key }))).accounts
}

describe('connected_at', () => {
  it('is set when the account becomes connected, kept while it stays so, and null in every other state', async () => {
    const t = await newTenant()
    await addAccount(t.tenantId, { id: '+15550002001', channel: 'alpha_web', status: 'connecting' })
    const connecting = await getAccount(db, t.tenantId, '+15550002001')
    if (!connecting) throw new Error('no account')
    expect(connecting.connectedAt).toBeNull()

    const at = Date.parse('2026-03-01T10:00:00Z')
    const up = statusChange(db, connecting, 'connected', null, at)
    await commit(up.statements)
    expect((await accountsOf(t))[0]).toMatchObject({ status: 'connected', connected_at: '2026-03-01T10:00:00.000Z' })

    // Staying connected (a new identifier) keeps the time it connected.
    const same = statusChange(db, up.account, 'connected', null, at + 60_000, '+15550002001-renamed')
    await commit(same.statements)
    expect((await accountsOf(t))[0]?.connected_at).toBe('2026-03-01T10:00:00.000Z')

    for (const to of ['restricted', 'disconnected', 'connecting'] as const) {
      const row = await getAccount(db, t.tenantId, '+15550002001')
      if (!row) throw new Error('no account')
      const change = statusChange(db, row, to, to === 'connecting' ? null : 'logged_out', at + 120_000)
      await commit(change.statements)
      expect((await accountsOf(t))[0]).toMatchObject({ status: to, connected_at: null })
    }
  })

  it('emits one account.* event per status change and none when nothing changes', async () => {
    const t = await newTenant()
    await addAccount(t.tenantId, { id: '+15550002002', channel: 'alpha_web', status: 'connecting' })
    const row = await getAccount(db, t.tenantId, '+15550002002')
    if (!row) throw new Error('no account')
    const up = statusChange(db, row, 'connected', null, Date.now())
    expect(up.statements).toHaveLength(2)
    await commit(up.statements)
    expect(statusChange(db, up.account, 'connected', null, Date.now()).statements).toHaveLength(0)
    expect((await eventsOf(t.tenantId, 'account.connected')).map((e) => e.accountId)).toEqual(['+15550002002'])
  })

  it('emits the event once when two requests that read the same old status make the same move', async () => {
    const t = await newTenant()
    await addAccount(t.tenantId, { id: '+15550002003', channel: 'alpha_web', status: 'connecting' })
    const stale = await getAccount(db, t.tenantId, '+15550002003')
    if (!stale) throw new Error('no account')
    const at = Date.parse('2026-03-01T10:00:00Z')
    const first = statusChange(db, stale, 'connected', null, at)
    const second = statusChange(db, stale, 'connected', null, at + 5_000)
    await commit(first.statements)
    await commit(second.statements)
    expect(await eventsOf(t.tenantId, 'account.connected')).toHaveLength(1)
    expect((await accountsOf(t))[0]).toMatchObject({ status: 'connected', connected_at: '2026-03-01T10:00:00.000Z' })
  })
})
