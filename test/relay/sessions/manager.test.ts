/** SessionManager with a recording driver, over a real RelayLink to a fake edge. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { PermanentSendError, type Connector, type ConnectorOptions, type Driver, type OutboundMessage } from '../../../relay/connector'
import type { RelayLink } from '../../../relay/link/socket'
import type { SessionManager } from '../../../relay/sessions/manager'
import type { FrameOf, RelayFrame } from '../../../schema/frames'
import type { FakeEdge } from '../../fixtures/fake-edge'
import { linkedManager } from './linked-manager'

const TOKEN = `rly_${'m'.repeat(40)}`

type Run = {
  opts: ConnectorOptions
  sent: OutboundMessage[]
  sendImpl: (m: OutboundMessage) => Promise<{ upstreamId: string }>
  /** What the connector does while it stops, before it returns. */
  onStop?: () => Promise<void>
}

let edge: FakeEdge
let link: RelayLink
let manager: SessionManager
let journal: string[]
let runs: Run[]

function recordingDriver(): Driver {
  return (opts) => {
    const run: Run = { opts, sent: [], sendImpl: async (m) => ({ upstreamId: `UP-${m.messageId}` }) }
    runs.push(run)
    const c: Connector = {
      start: async () => void journal.push(`start ${opts.accountId}`),
      stop: async () => {
        await new Promise((r) => setTimeout(r, 20))
        await run.onStop?.()
        journal.push(`stop ${opts.accountId}`)
      },
      logout: async () => void journal.push(`logout ${opts.accountId}`),
      send: async (m) => {
        run.sent.push(m)
        return run.sendImpl(m)
      },
    }
    return c
  }
}

async function setup(leaseMs = 10_000) {
  journal = []
  runs = []
  ;({ edge, link, manager } = await linkedManager({
    token: TOKEN,
    leaseMs,
    instance: 'inst-manager-1',
    driver: 'sim',
    channel: 'alpha_web',
    makeDriver: recordingDriver,
  }))
}

beforeEach(async () => setup())
afterEach(async () => {
  link.stop()
  await manager.stopAll('test over')
  await edge.close()
})

const until = async (cond: () => boolean, timeoutMs = 5000) => {
  const deadline = Date.now() + timeoutMs
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('condition not met')
    await new Promise((r) => setTimeout(r, 5))
  }
}

function assign(sid: string, fence: number, accountId = '+15550001'): FrameOf<'assign'> {
  return {
    type: 'assign',
    sid,
    fence,
    account: { tenantId: 'ten_1', accountId, channel: 'alpha_web', phone: accountId },
    linkMethod: 'qr',
    forceNew: false,
    importContacts: false,
  }
}

const connected = (run: Run) => run.opts.events.state({ state: 'connected', identifier: run.opts.phone, upstreamUserId: null })
const send = (sid: string, fence: number, messageId: string, expiresAt = Date.now() + 60_000): FrameOf<'send'> => ({
  type: 'send',
  sid,
  fence,
  message: { messageId, to: { phone: '+447700900001', peerId: null }, text: 'hi', mediaUrl: null },
  expiresAt,
})
const framesOf = <T extends RelayFrame['type']>(type: T) => edge.received.filter((f): f is Extract<RelayFrame, { type: T }> => f.type === type)

describe('SessionManager', () => {
  it('starts a connector for an assigned session with its options and reports its states', async () => {
    edge.send(assign('ses_1', 1))
    await until(() => runs.length === 1)
    expect(runs[0]!.opts).toMatchObject({ accountId: '+15550001', phone: '+15550001', linkMethod: 'qr', forceNew: false })
    connected(runs[0]!)
    await expect(edge.waitFor((f) => f.type === 'state')).resolves.toMatchObject({ sid: 'ses_1', fence: 1, state: { state: 'connected' } })
    expect(manager.running()).toEqual([{ sid: 'ses_1', fence: 1 }])
  })

  it('stops the older run of an account before starting the newer, so one number never has two connections', async () => {
    edge.send(assign('ses_1', 1))
    edge.send(assign('ses_2', 2))
    await until(() => journal.length === 3)
    expect(journal).toEqual(['start +15550001', 'stop +15550001', 'start +15550001'])
    expect(manager.running()).toEqual([{ sid: 'ses_2', fence: 2 }])
  })

  it('stops a revoked session and logs out one being removed', async () => {
    edge.send(assign('ses_1', 1))
    edge.send(assign('ses_2', 1, '+15550002'))
    await until(() => runs.length === 2)
    edge.send({ type: 'revoke', sid: 'ses_1', fence: 1, reason: 'moved' })
    edge.send({ type: 'logout', sid: 'ses_2', fence: 1 })
    await until(() => journal.length === 4)
    expect(journal.slice(2).sort()).toEqual(['logout +15550002', 'stop +15550001'])
    expect(manager.running()).toEqual([])
  })

  it('stops a session on a refusal of its own frame, never on a late refusal of an older fence of the same sid', async () => {
    edge.send(assign('ses_1', 2))
    await until(() => runs.length === 1)
    connected(runs[0]!)
    edge.send({ type: 'reject', id: 'frm_old', sid: 'ses_1', fence: 1, reason: 'stale_fence' })
    // Frames are handled in order: the probe's answer shows the session still running after the late refusal.
    edge.send({ type: 'probe', id: 'prb_1', sid: 'ses_1' })
    await expect(edge.waitFor((f) => f.type === 'probe_result' && f.id === 'prb_1')).resolves.toMatchObject({ state: { state: 'connected' } })
    expect(manager.running()).toEqual([{ sid: 'ses_1', fence: 2 }])
    edge.send({ type: 'reject', id: 'frm_new', sid: 'ses_1', fence: 2, reason: 'stale_fence' })
    await until(() => journal.length === 2)
    expect(journal).toEqual(['start +15550001', 'stop +15550001'])
    expect(manager.running()).toEqual([])
  })

  it('holds sends until the session is connected, then reports each hand-over with its upstream id', async () => {
    edge.send(assign('ses_1', 1))
    await until(() => runs.length === 1)
    edge.send(send('ses_1', 1, 'msg_a'))
    await new Promise((r) => setTimeout(r, 50))
    expect(runs[0]!.sent).toEqual([])
    connected(runs[0]!)
    await expect(edge.waitFor((f) => f.type === 'sent')).resolves.toMatchObject({ messageId: 'msg_a', upstreamId: 'UP-msg_a', fence: 1 })
  })

  it('hands sends over while the account is restricted, so a reply to an existing chat is not held for the restriction', async () => {
    edge.send(assign('ses_1', 1))
    await until(() => runs.length === 1)
    edge.send(send('ses_1', 1, 'msg_held'))
    await new Promise((r) => setTimeout(r, 50))
    expect(runs[0]!.sent).toEqual([])
    runs[0]!.opts.events.state({ state: 'restricted', problem: 'blocked_by_alpha', message: 'no new chats (463)', until: null })
    await expect(edge.waitFor((f) => f.type === 'sent' && f.messageId === 'msg_held')).resolves.toMatchObject({ upstreamId: 'UP-msg_held' })
    edge.send(send('ses_1', 1, 'msg_reply'))
    await expect(edge.waitFor((f) => f.type === 'sent' && f.messageId === 'msg_reply')).resolves.toMatchObject({ upstreamId: 'UP-msg_reply' })
  })

  it('holds a send again when a restricted session cannot take it because it is not connected', async () => {
    edge.send(assign('ses_1', 1))
    await until(() => runs.length === 1)
    runs[0]!.sendImpl = async () => {
      throw Object.assign(new Error('the alpha session is not connected'), { retryable: true })
    }
    runs[0]!.opts.events.state({ state: 'restricted', problem: 'blocked_by_alpha', message: 'banned', until: Date.now() + 60_000 })
    edge.send(send('ses_1', 1, 'msg_ban'))
    await until(() => runs[0]!.sent.length === 1)
    runs[0]!.sendImpl = async (m) => ({ upstreamId: `UP-${m.messageId}` })
    connected(runs[0]!)
    await expect(edge.waitFor((f) => f.type === 'sent' && f.messageId === 'msg_ban')).resolves.toMatchObject({ upstreamId: 'UP-msg_ban' })
  })

  it('answers a resend of a message already handed over from memory instead of sending it twice', async () => {
    edge.send(assign('ses_1', 1))
    await until(() => runs.length === 1)
    connected(runs[0]!)
    edge.send(send('ses_1', 1, 'msg_b'))
    await until(() => framesOf('sent').length === 1)
    edge.send(send('ses_1', 1, 'msg_b'))
    await until(() => framesOf('sent').length === 2)
    expect(runs[0]!.sent).toHaveLength(1)
  })

  it('ignores a send under another fence, and refuses an expired one', async () => {
    edge.send(assign('ses_1', 2))
    await until(() => runs.length === 1)
    connected(runs[0]!)
    edge.send(send('ses_1', 1, 'msg_old'))
    edge.send(send('ses_1', 2, 'msg_late', Date.now() - 1))
    await expect(edge.waitFor((f) => f.type === 'send_failed')).resolves.toMatchObject({
      messageId: 'msg_late',
      error: expect.stringMatching(/^relay_unavailable/),
    })
    expect(runs[0]!.sent).toEqual([])
  })

  it('reports a permanent refusal as send_failed and leaves a transient failure for the edge to retry', async () => {
    edge.send(assign('ses_1', 1))
    await until(() => runs.length === 1)
    connected(runs[0]!)
    runs[0]!.sendImpl = async (m) => {
      if (m.messageId === 'msg_perm') throw new PermanentSendError('no such number', 404)
      throw new Error('socket hiccup')
    }
    edge.send(send('ses_1', 1, 'msg_tmp'))
    edge.send(send('ses_1', 1, 'msg_perm'))
    await expect(edge.waitFor((f) => f.type === 'send_failed')).resolves.toMatchObject({ messageId: 'msg_perm', error: 'no such number', code: 404 })
    expect(framesOf('send_failed').map((f) => f.messageId)).toEqual(['msg_perm'])
  })

  it("fails a send for good when the driver's own error says it is not retryable (the alpha driver's SendError)", async () => {
    edge.send(assign('ses_1', 1))
    await until(() => runs.length === 1)
    connected(runs[0]!)
    runs[0]!.sendImpl = async () => {
      throw Object.assign(new Error('not a valid recipient'), { code: 'invalid_recipient', retryable: false })
    }
    edge.send(send('ses_1', 1, 'msg_bad'))
    await expect(edge.waitFor((f) => f.type === 'send_failed')).resolves.toMatchObject({ messageId: 'msg_bad', error: 'not a valid recipient', code: null })
  })

  it('calls onCommitted for an inbound message only once the edge acked it', async () => {
    edge.send(assign('ses_1', 1))
    await until(() => runs.length === 1)
    edge.autoAck = false
    let committed = false
    runs[0]!.opts.events.inbound({
      upstreamId: 'U1',
      from: { id: 'p', phone: '447700900001', lid: null, name: null },
      text: 'x',
      media: null,
      sentAt: 1,
      onCommitted: () => (committed = true),
    })
    const f = await edge.waitFor((x) => x.type === 'inbound')
    await new Promise((r) => setTimeout(r, 30))
    expect(committed).toBe(false)
    expect('onCommitted' in (f.type === 'inbound' ? f.message : {})).toBe(false)
    edge.send({ type: 'ack', ids: ['id' in f ? f.id : ''] })
    await until(() => committed)
  })

  it('reports what the driver hands over while it stops (acked upstream already), before the session is released', async () => {
    edge.send(assign('ses_1', 1))
    await until(() => runs.length === 1)
    const run = runs[0]!
    let committed = false
    // alpha's driver: the socket's buffered backlog comes out as the socket ends, and stop waits for the edge to store it.
    run.opts.events.state({ state: 'connected', identifier: run.opts.phone, upstreamUserId: null })
    run.onStop = async () => {
      await new Promise<void>((done) => {
        run.opts.events.inbound({
          upstreamId: 'BUFFERED1',
          from: { id: 'p', phone: '447700900001', lid: null, name: null },
          text: 'sent while the relay restarted',
          media: null,
          sentAt: 1,
          onCommitted: () => {
            committed = true
            done()
          },
        })
      })
    }
    await manager.drain(3000)
    expect(committed).toBe(true)
    const inbound = edge.received.findIndex((f) => f.type === 'inbound')
    const released = edge.received.findIndex((f) => f.type === 'released')
    expect(inbound).toBeGreaterThan(-1)
    expect(inbound).toBeLessThan(released)
  })

  it('answers a probe with the session state, or null for a session it does not run', async () => {
    edge.send(assign('ses_1', 1))
    await until(() => runs.length === 1)
    connected(runs[0]!)
    edge.send({ type: 'probe', id: 'p1', sid: 'ses_1' })
    edge.send({ type: 'probe', id: 'p2', sid: 'ses_x' })
    await expect(edge.waitFor((f) => f.type === 'probe_result' && f.id === 'p1')).resolves.toMatchObject({ state: { state: 'connected' } })
    await expect(edge.waitFor((f) => f.type === 'probe_result' && f.id === 'p2')).resolves.toMatchObject({ state: null })
  })

  it('drains: says so, stops every session and hands each back with released', async () => {
    edge.send(assign('ses_1', 1))
    edge.send(assign('ses_2', 3, '+15550002'))
    await until(() => runs.length === 2)
    await manager.drain(3000)
    expect(framesOf('draining')).toHaveLength(1)
    expect(
      framesOf('released')
        .map((f) => [f.sid, f.fence])
        .sort()
    ).toEqual([
      ['ses_1', 1],
      ['ses_2', 3],
    ])
    expect(journal.filter((j) => j.startsWith('stop'))).toHaveLength(2)
    edge.send(assign('ses_3', 1, '+15550003'))
    await edge.waitFor((f) => f.type === 'released' && f.sid === 'ses_3')
    expect(runs).toHaveLength(2)
  })
})

describe('SessionManager lease', () => {
  it('stops every session before the lease lapses when the edge cannot be reached', async () => {
    await edge.close()
    link.stop()
    await manager.stopAll('reset')
    await setup(2500)
    edge.send(assign('ses_1', 1))
    await until(() => runs.length === 1)
    const validUntil = link.leaseValidUntil()!
    await edge.close()
    await until(() => journal.includes('stop +15550001'), 4000)
    expect(Date.now()).toBeLessThan(validUntil)
    expect(manager.running()).toEqual([])
  })
})
