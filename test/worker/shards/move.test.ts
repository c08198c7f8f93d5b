/**
 * Issue 22 item 4: POST /admin/tenants/{id}/move. A move copies every row of the tenant to the other shard, checks
 * them, flips the directory and deletes the old rows; cursors taken before it keep working; pushes racing it are
 * answered 503 `temporarily_unavailable` or stored, never lost and never stored twice; an open wait is answered and
 * told to repeat; and fast-check drives random moves between pushes against a model of one database.
 */
import fc from 'fast-check'
import { describe, expect, inject, it } from 'vitest'
import { admin, body, call, connectCustom, pushInbound, type TestTenant } from '../helpers'
import { finishMove, rowsOn, startMove, stepMove, tenantOn, textsOn } from './shard-helpers'

const MOVED = ['accounts', 'channel_connections', 'contacts', 'messages', 'events', 'audit_log', 'webhooks']

type Listed = { messages: Array<{ id: string; text: string }>; next_cursor: string | null }
type Waited = { messages: Array<{ text: string }>; cursor: string }

async function waitCursor(t: TestTenant): Promise<string> {
  return (await body<Waited>(await call('/v1/messages/wait?timeout_s=0', { key: t.key }))).cursor
}

async function waitAfter(t: TestTenant, cursor: string): Promise<Waited> {
  const res = await call(`/v1/messages/wait?timeout_s=0&cursor=${encodeURIComponent(cursor)}`, { key: t.key })
  expect(res.status).toBe(200)
  return body<Waited>(res)
}

/** Pushes until the gateway stores it: a 503 during the move is repeated, as a bridge does, with the same message id. */
async function pushSurely(t: TestTenant, text: string): Promise<{ tries: number; refused: number }> {
  for (let tries = 1; tries <= 50; tries++) {
    const res = await call('/v1/channels/custom/inbound', {
      method: 'POST',
      key: t.key,
      json: { customData: { body: text, fromId: 'racer', messageSid: text } },
    })
    if (res.status === 200) return { tries, refused: tries - 1 }
    expect(res.status).toBe(503)
    expect(res.headers.get('Retry-After')).not.toBeNull()
    await new Promise((r) => setTimeout(r, 5))
  }
  throw new Error(`push ${text} never stored`)
}

async function placementOf(tenantId: string) {
  return body<{ shard: number; moving_to: number | null }>(await admin(`/admin/tenants/${tenantId}`))
}

describe('moving a tenant between shards', () => {
  it('moves every row, deletes the old ones, and keeps list and wait cursors working', async () => {
    const t = await tenantOn(0)
    await connectCustom(t)
    for (const i of [1, 2, 3]) expect((await pushInbound(t, { body: `m${i}`, fromId: 'u1' })).status).toBe(200)
    const before = Object.fromEntries(await Promise.all(MOVED.map(async (table) => [table, await rowsOn(0, table, t.tenantId)] as const)))
    const page1 = await body<Listed>(await call('/v1/messages?limit=2', { key: t.key }))
    const waitBefore = await waitCursor(t)

    const started = await startMove(t.tenantId, 1)
    expect(started.status).toBe(202)
    expect(await body(started)).toMatchObject({ from: 0, to: 1, phase: 'fencing' })
    const move = await finishMove(t.tenantId)
    expect(move).toMatchObject({ phase: 'done', from: 0, to: 1, error: null })
    expect(await placementOf(t.tenantId)).toMatchObject({ shard: 1, moving_to: null })

    for (const table of MOVED) {
      expect(await rowsOn(1, table, t.tenantId), table).toBe(before[table])
      expect(await rowsOn(0, table, t.tenantId), table).toBe(0)
    }
    expect(await textsOn(1, t.tenantId)).toEqual(['m1', 'm2', 'm3'])

    // The list cursor from before the move reads on where it stopped, on the new shard.
    const page2 = await body<Listed>(await call(`/v1/messages?limit=2&before=${encodeURIComponent(page1.next_cursor ?? '')}`, { key: t.key }))
    expect([...page1.messages, ...page2.messages].map((m) => m.text).sort()).toEqual(['m1', 'm2', 'm3'])
    // The wait cursor from before the move gets exactly what came after it.
    expect((await pushInbound(t, { body: 'after', fromId: 'u1' })).status).toBe(200)
    expect((await waitAfter(t, waitBefore)).messages.map((m) => m.text)).toEqual(['after'])
    expect(await textsOn(1, t.tenantId)).toEqual(['m1', 'm2', 'm3', 'after'])

    // And back again: the second move's maps compose with the first's.
    expect((await startMove(t.tenantId, 0)).status).toBe(202)
    expect(await finishMove(t.tenantId)).toMatchObject({ phase: 'done' })
    expect(await textsOn(0, t.tenantId)).toEqual(['m1', 'm2', 'm3', 'after'])
    expect(await textsOn(1, t.tenantId)).toEqual([])
    expect((await pushInbound(t, { body: 'home', fromId: 'u1' })).status).toBe(200)
    expect((await waitAfter(t, waitBefore)).messages.map((m) => m.text)).toEqual(['after', 'home'])
  })

  it('refuses a move to where the tenant is, to an unbound shard, and a second move while one runs', async () => {
    const t = await tenantOn(0)
    expect((await startMove(t.tenantId, 0)).status).toBe(409)
    expect((await startMove(t.tenantId, 5)).status).toBe(400)
    expect((await startMove('ten_nobody', 1)).status).toBe(404)
    expect((await startMove(t.tenantId, 1)).status).toBe(202)
    expect((await startMove(t.tenantId, 1)).status).toBe(409)
    expect(await finishMove(t.tenantId)).toMatchObject({ phase: 'done' })
  })

  it('answers pushes 503 while fenced and an open wait with a retry, and loses or repeats nothing', async () => {
    const t = await tenantOn(0)
    await connectCustom(t)
    expect((await pushInbound(t, { body: 'seed', fromId: 'racer', messageSid: 'seed' })).status).toBe(200)
    const cursor = await waitCursor(t)
    // An open wait when the move begins is answered, and told to repeat (its cursor stays good).
    const open = call(`/v1/messages/wait?timeout_s=20&cursor=${encodeURIComponent(cursor)}`, { key: t.key })
    await new Promise((r) => setTimeout(r, 50))
    expect((await startMove(t.tenantId, 1)).status).toBe(202)
    // The first step fences (the alarm may have run it already on its own).
    while ((await stepMove(t.tenantId)).phase === 'fencing');
    const waited = await open
    expect(waited.status).toBe(503)
    expect(waited.headers.get('Retry-After')).not.toBeNull()
    // While fenced, a push is refused with the documented retry.
    const fenced = await call('/v1/channels/custom/inbound', {
      method: 'POST',
      key: t.key,
      json: { customData: { body: 'x', fromId: 'racer', messageSid: 'x' } },
    })
    expect(fenced.status).toBe(503)
    expect(await body(fenced)).toMatchObject({ error_code: 503 })

    // A stream of pushes racing the rest of the move, each repeated until stored.
    const texts = Array.from({ length: 12 }, (_, i) => `race-${i}`)
    const stepping = (async () => {
      for (let i = 0; i < 200; i++) {
        const m = await stepMove(t.tenantId)
        if (m.phase === 'done' || m.phase === 'failed') return m
        await new Promise((r) => setTimeout(r, 3))
      }
      throw new Error('move did not end')
    })()
    const pushes = (async () => {
      const out = []
      for (const text of texts) out.push(await pushSurely(t, text))
      return out
    })()
    const [move] = await Promise.all([stepping, pushes])
    expect(move).toMatchObject({ phase: 'done' })
    expect((await pushSurely(t, 'x')).tries).toBe(1)

    const stored = await textsOn(1, t.tenantId)
    expect([...stored].sort()).toEqual(['seed', ...texts, 'x'].sort())
    expect(await textsOn(0, t.tenantId)).toEqual([])
    // The wait repeated with the cursor it had gets every one of them, once.
    const all: string[] = []
    let c = cursor
    for (let i = 0; i < 10; i++) {
      const w = await waitAfter(t, c)
      if (w.messages.length === 0) break
      all.push(...w.messages.map((m) => m.text))
      c = w.cursor
    }
    expect(all.sort()).toEqual([...texts, 'x'].sort())
  })

  it('random moves between pushes match one database (fast-check)', async () => {
    const { seed, runs } = inject('fuzz')
    const Step = fc.oneof(
      fc.constant({ kind: 'move' as const }),
      fc.integer({ min: 1, max: 3 }).map((n) => ({ kind: 'push' as const, n }))
    )
    await fc.assert(
      fc.asyncProperty(fc.array(Step, { minLength: 1, maxLength: 5 }), async (steps) => {
        const t = await tenantOn(0)
        await connectCustom(t)
        const cursor = await waitCursor(t)
        const model: string[] = []
        let shard = 0
        for (const [i, step] of steps.entries()) {
          if (step.kind === 'move') {
            shard = 1 - shard
            expect((await startMove(t.tenantId, shard)).status).toBe(202)
            // Pushes land between the steps of the move.
            for (let k = 0; k < 3; k++) {
              await stepMove(t.tenantId)
              const text = `s${i}-${k}`
              await pushSurely(t, text)
              model.push(text)
            }
            expect(await finishMove(t.tenantId)).toMatchObject({ phase: 'done' })
          } else {
            for (let k = 0; k < step.n; k++) {
              const text = `p${i}-${k}`
              expect((await pushInbound(t, { body: text, fromId: 'racer', messageSid: text })).status).toBe(200)
              model.push(text)
            }
          }
        }
        expect([...(await textsOn(shard, t.tenantId))].sort()).toEqual([...model].sort())
        expect(await textsOn(1 - shard, t.tenantId)).toEqual([])
        const seen: string[] = []
        let c = cursor
        for (let i = 0; i < 20; i++) {
          const w = await waitAfter(t, c)
          if (w.messages.length === 0) break
          seen.push(...w.messages.map((m) => m.text))
          c = w.cursor
        }
        expect(seen.sort()).toEqual([...model].sort())
      }),
      { seed, numRuns: Math.max(2, Math.min(runs, 4)) }
    )
  }, 120_000)
})
