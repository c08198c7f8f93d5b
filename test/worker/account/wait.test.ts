/**
 * GET /v1/messages/wait as held by the AccountDO: pushed wakeups, cursors that neither skip nor repeat across
 * hand-overs, the 2-slot limit and its release (return, timeout, client gone), and waits over several accounts.
 */
import { describe, expect, it } from 'vitest'
import { WAIT_SLOTS_PER_ACCOUNT } from '../../../worker/account/waits'
import { body, call, connectCustom, newTenant, pushInbound, send, type TestTenant, type WireMessageBody } from '../helpers'
import { addAccount, ingestVia, openWaits, untilOpenWaits } from '../state'

type WaitBody = { messages: WireMessageBody[]; cursor: string }

async function wait(t: TestTenant, query: string, signal?: AbortSignal) {
  const res = await call(`/v1/messages/wait?${query}`, { key: t.key, signal })
  return { status: res.status, body: await body<WaitBody & { error_code?: string }>(res) }
}

async function customTenant() {
  const t = await newTenant()
  await connectCustom(t)
  return t
}

/** The cursor for "from now". */
async function now(t: TestTenant) {
  return (await wait(t, 'timeout_s=0')).body.cursor
}

describe('waking', () => {
  it('returns a message pushed while the wait is open within milliseconds', async () => {
    const t = await customTenant()
    const cursor = await now(t)
    const pending = wait(t, `cursor=${cursor}&timeout_s=20`)
    await untilOpenWaits(t.tenantId, 'custom', 1)
    const pushedAt = Date.now()
    const pushed = await pushInbound(t, { body: 'wake up', fromId: 'w1' })
    const got = await pending
    const latencyMs = Date.now() - pushedAt
    expect(got.status).toBe(200)
    expect(got.body.messages.map((m) => m.id)).toEqual([pushed.body.message_id])
    expect(latencyMs).toBeLessThan(500)
  })

  it("answers the woken wait before the push that woke it (the agent's latency counts, the pusher's ack can wait a turn)", async () => {
    const t = await customTenant()
    const cursor = await now(t)
    const order: string[] = []
    const pending = call(`/v1/messages/wait?cursor=${cursor}&timeout_s=20`, { key: t.key }).then((res) => order.push(`wait ${res.status}`))
    await untilOpenWaits(t.tenantId, 'custom', 1)
    const pushed = call('/v1/channels/custom/inbound', { method: 'POST', key: t.key, json: { customData: { body: 'first', fromId: 'w0' } } }).then((res) =>
      order.push(`push ${res.status}`)
    )
    await Promise.all([pending, pushed])
    expect(order).toEqual(['wait 200', 'push 200'])
  })

  it('wakes every open wait of the account', async () => {
    const t = await customTenant()
    const cursor = await now(t)
    const a = wait(t, `cursor=${cursor}&timeout_s=20`)
    const b = wait(t, `cursor=${cursor}&timeout_s=20`)
    await untilOpenWaits(t.tenantId, 'custom', 2)
    await pushInbound(t, { body: 'for both', fromId: 'w2' })
    const [ra, rb] = await Promise.all([a, b])
    expect(ra.body.messages.map((m) => m.text)).toEqual(['for both'])
    expect(rb.body.messages.map((m) => m.text)).toEqual(['for both'])
  })

  it('is not woken by outbound messages, and never returns them', async () => {
    const t = await customTenant()
    await pushInbound(t, { body: 'hi', fromId: 'o1' })
    const cursor = await now(t)
    const pending = wait(t, `cursor=${cursor}&timeout_s=1`)
    await untilOpenWaits(t.tenantId, 'custom', 1)
    expect((await send(t, { to: { external_id: 'o1' }, text: 'outbound' })).status).toBe(202)
    expect((await pending).body.messages).toEqual([])
  })
})

describe('cursors', () => {
  it('starts from now without a cursor: earlier messages are not returned', async () => {
    const t = await customTenant()
    await pushInbound(t, { body: 'old news', fromId: 'c1' })
    const r = await wait(t, 'timeout_s=0')
    expect(r.status).toBe(200)
    expect(r.body.messages).toEqual([])
  })

  it('returns at once what is already newer than the cursor: oldest first, at most 50, the rest on the next wait', async () => {
    const t = await customTenant()
    const cursor = await now(t)
    const pushed: string[] = []
    for (let i = 0; i < 53; i++) pushed.push(String((await pushInbound(t, { body: `m${i}`, fromId: `f${i % 4}` })).body.message_id))
    const first = await wait(t, `cursor=${cursor}&timeout_s=20`)
    expect(first.body.messages.map((m) => m.id)).toEqual(pushed.slice(0, 50))
    const second = await wait(t, `cursor=${first.body.cursor}&timeout_s=20`)
    expect(second.body.messages.map((m) => m.id)).toEqual(pushed.slice(50))
    const third = await wait(t, `cursor=${second.body.cursor}&timeout_s=0`)
    expect(third.body.messages).toEqual([])
  })

  it('answers [] after timeout_s and a cursor that still catches what comes next', async () => {
    const t = await customTenant()
    const cursor = await now(t)
    const startedAt = Date.now()
    const empty = await wait(t, `cursor=${cursor}&timeout_s=1`)
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(950)
    expect(empty.body.messages).toEqual([])
    const pushed = await pushInbound(t, { body: 'after the timeout', fromId: 't1' })
    expect((await wait(t, `cursor=${empty.body.cursor}&timeout_s=0`)).body.messages.map((m) => m.id)).toEqual([pushed.body.message_id])
  })

  it('answers timeout_s=0 at once', async () => {
    const t = await customTenant()
    const startedAt = Date.now()
    expect((await wait(t, 'timeout_s=0')).status).toBe(200)
    expect(Date.now() - startedAt).toBeLessThan(500)
  })

  it('never skips or repeats a message across consecutive waits while messages keep arriving', async () => {
    const t = await customTenant()
    let cursor = await now(t)
    const total = 40
    const pushed: string[] = []
    const producer = (async () => {
      for (let i = 0; i < total; i++) {
        pushed.push(String((await pushInbound(t, { body: `n${i}`, fromId: `p${i % 3}` })).body.message_id))
        if (i % 7 === 0) await new Promise((r) => setTimeout(r, 5))
      }
    })()
    const seen: string[] = []
    let rounds = 0
    while (seen.length < total && rounds++ < 200) {
      const r = await wait(t, `cursor=${cursor}&timeout_s=5`)
      expect(r.status).toBe(200)
      seen.push(...r.body.messages.map((m) => m.id))
      cursor = r.body.cursor
    }
    await producer
    expect(seen).toEqual(pushed)
    expect(rounds).toBeGreaterThan(1)
  })
})

describe('wait slots', () => {
  it(`allows ${WAIT_SLOTS_PER_ACCOUNT} open waits per account and refuses the third with wait_concurrency`, async () => {
    const t = await customTenant()
    const cursor = await now(t)
    const open = [wait(t, `cursor=${cursor}&timeout_s=20`), wait(t, `cursor=${cursor}&timeout_s=20`)]
    await untilOpenWaits(t.tenantId, 'custom', 2)
    const third = await wait(t, `cursor=${cursor}&timeout_s=20`)
    expect(third.status).toBe(429)
    expect(third.body).toEqual({ error_code: 'wait_concurrency', error: expect.any(String) })
    await pushInbound(t, { body: 'release', fromId: 's1' })
    await Promise.all(open)
  })

  it('frees a slot when a wait returns', async () => {
    const t = await customTenant()
    const cursor = await now(t)
    const open = [wait(t, `cursor=${cursor}&timeout_s=20`), wait(t, `cursor=${cursor}&timeout_s=20`)]
    await untilOpenWaits(t.tenantId, 'custom', 2)
    await pushInbound(t, { body: 'done', fromId: 's2' })
    await Promise.all(open)
    expect(await openWaits(t.tenantId, 'custom')).toBe(0)
    expect((await wait(t, 'timeout_s=0')).status).toBe(200)
  })

  it('frees a slot when the client goes away', async () => {
    const t = await customTenant()
    const cursor = await now(t)
    const leaving = new AbortController()
    const gone = wait(t, `cursor=${cursor}&timeout_s=20`, leaving.signal).catch((err: unknown) => err)
    const staying = wait(t, `cursor=${cursor}&timeout_s=20`)
    await untilOpenWaits(t.tenantId, 'custom', 2)
    leaving.abort()
    expect(await gone).toBeInstanceOf(Error)
    await untilOpenWaits(t.tenantId, 'custom', 1)
    const next = wait(t, `cursor=${cursor}&timeout_s=20`)
    await untilOpenWaits(t.tenantId, 'custom', 2)
    await pushInbound(t, { body: 'for the two still here', fromId: 's3' })
    expect((await next).body.messages).toHaveLength(1)
    expect((await staying).body.messages).toHaveLength(1)
  })
})

describe('waits over several accounts', () => {
  const SMS = '+15550004444'

  async function twoAccounts() {
    const t = await customTenant()
    const sms = await addAccount(t.tenantId, { id: SMS, channel: 'sms' })
    return { t, sms }
  }

  it("covers all of the caller's accounts without account_id", async () => {
    const { t, sms } = await twoAccounts()
    const cursor = await now(t)
    const pending = wait(t, `cursor=${cursor}&timeout_s=20`)
    await untilOpenWaits(t.tenantId, SMS, 1)
    await untilOpenWaits(t.tenantId, 'custom', 1)
    const pushedAt = Date.now()
    await ingestVia(sms, { phone: '+15551112222' }, 'by sms')
    const got = await pending
    expect(Date.now() - pushedAt).toBeLessThan(500)
    expect(got.body.messages.map((m) => [m.account_id, m.text])).toEqual([[SMS, 'by sms']])
    expect(await openWaits(t.tenantId, 'custom')).toBe(0)
  })

  it('returns only the named account with account_id', async () => {
    const { t, sms } = await twoAccounts()
    const cursor = await now(t)
    await ingestVia(sms, { phone: '+15551112222' }, 'sms one')
    await pushInbound(t, { body: 'custom one', fromId: 'x' })
    expect((await wait(t, `cursor=${cursor}&account_id=custom&timeout_s=0`)).body.messages.map((m) => m.text)).toEqual(['custom one'])
    expect((await wait(t, `cursor=${cursor}&account_id=${encodeURIComponent(SMS)}&timeout_s=0`)).body.messages.map((m) => m.text)).toEqual(['sms one'])
    expect((await wait(t, `cursor=${cursor}&timeout_s=0`)).body.messages.map((m) => m.text)).toEqual(['sms one', 'custom one'])
  })

  it('never skips or repeats across accounts while both keep receiving', async () => {
    const { t, sms } = await twoAccounts()
    let cursor = await now(t)
    const total = 30
    const pushed: string[] = []
    const producer = (async () => {
      for (let i = 0; i < total; i++) {
        if (i % 2 === 0) pushed.push(String((await pushInbound(t, { body: `c${i}`, fromId: 'cc' })).body.message_id))
        else {
          const r = await ingestVia(sms, { phone: '+15553334444' }, `s${i}`)
          if (!r.stored) throw new Error('not stored')
          pushed.push(r.messageId)
        }
      }
    })()
    const seen: string[] = []
    let rounds = 0
    while (seen.length < total && rounds++ < 200) {
      const r = await wait(t, `cursor=${cursor}&timeout_s=5`)
      seen.push(...r.body.messages.map((m) => m.id))
      cursor = r.body.cursor
    }
    await producer
    expect(seen).toEqual(pushed)
  })

  it('holds a slot on every account and gives them all back when the client goes away', async () => {
    const { t } = await twoAccounts()
    const cursor = await now(t)
    const leaving = new AbortController()
    const gone = wait(t, `cursor=${cursor}&timeout_s=20`, leaving.signal).catch((err: unknown) => err)
    const staying = wait(t, `cursor=${cursor}&timeout_s=20`)
    await untilOpenWaits(t.tenantId, SMS, 2)
    await untilOpenWaits(t.tenantId, 'custom', 2)
    expect((await wait(t, `cursor=${cursor}&account_id=custom&timeout_s=0`)).body.error_code).toBe('wait_concurrency')
    leaving.abort()
    await gone
    await untilOpenWaits(t.tenantId, SMS, 1)
    await untilOpenWaits(t.tenantId, 'custom', 1)
    await pushInbound(t, { body: 'bye', fromId: 'z' })
    expect((await staying).body.messages.map((m) => m.text)).toEqual(['bye'])
  })
})

describe('tenancy', () => {
  it("never returns another tenant's messages", async () => {
    const a = await customTenant()
    const b = await customTenant()
    const cursorB = await now(b)
    const pendingB = wait(b, `cursor=${cursorB}&timeout_s=1`)
    await untilOpenWaits(b.tenantId, 'custom', 1)
    await pushInbound(a, { body: 'for A only', fromId: 'a' })
    expect((await pendingB).body.messages).toEqual([])
  })

  it('answers [] after the timeout for a tenant without accounts', async () => {
    const t = await newTenant()
    const r = await wait(t, 'timeout_s=0')
    expect(r.status).toBe(200)
    expect(r.body.messages).toEqual([])
  })
})
