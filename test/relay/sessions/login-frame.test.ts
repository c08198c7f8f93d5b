/** beta's login steps through the relay core: the real beta driver on the fake network, over a real RelayLink to a fake edge. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { makeBetaDriver } from '../../../relay/beta/client'
import type { FrameOf } from '../../../schema/frames'
import { FakeBetaNetwork } from '../../fixtures/beta-network'
import type { FakeEdge } from '../../fixtures/fake-edge'
import { linkedManager } from './linked-manager'

const TOKEN = `rly_${'b'.repeat(40)}`
const PHONE = '+15557770001'

let edge: FakeEdge
let net: FakeBetaNetwork

let stopLinked: () => Promise<void>

beforeEach(async () => {
  net = new FakeBetaNetwork()
  const linked = await linkedManager({
    token: TOKEN,
    instance: 'inst-beta-1',
    driver: 'beta',
    channel: 'beta',
    makeDriver: () => makeBetaDriver({ creds: net.creds, makeClient: net.makeClient }),
  })
  ;({ edge } = linked)
  stopLinked = linked.stop
})
afterEach(async () => stopLinked())

function assign(sid: string, linkMethod: 'code' | 'qr' = 'code'): FrameOf<'assign'> {
  return {
    type: 'assign',
    sid,
    fence: 1,
    account: { tenantId: 'ten_1', accountId: PHONE, channel: 'beta', phone: PHONE },
    linkMethod,
    forceNew: false,
    importContacts: false,
  }
}

describe('login frames', () => {
  it('carries a code to the session waiting for it and answers with the verdict, then the session reports connected', async () => {
    net.addAccount(PHONE, { username: 'owner', password: 'pw' })
    edge.send(assign('s1'))
    await edge.waitFor((f) => f.type === 'state' && f.state.state === 'code_required')
    edge.send({ type: 'login', id: 'l1', sid: 's1', fence: 1, step: { kind: 'code', code: '00000' } })
    const wrong = await edge.waitFor((f) => f.type === 'login_result' && f.id === 'l1')
    expect(wrong).toMatchObject({ outcome: { status: 'refused', error: 'code_invalid' } })
    edge.send({ type: 'login', id: 'l2', sid: 's1', fence: 1, step: { kind: 'code', code: net.codeFor(PHONE) } })
    expect(await edge.waitFor((f) => f.type === 'login_result' && f.id === 'l2')).toMatchObject({ outcome: { status: 'password_required' } })
    edge.send({ type: 'login', id: 'l3', sid: 's1', fence: 1, step: { kind: 'password', password: 'pw' } })
    expect(await edge.waitFor((f) => f.type === 'login_result' && f.id === 'l3', 30_000)).toMatchObject({ outcome: { status: 'connected', username: 'owner' } })
    await edge.waitFor((f) => f.type === 'state' && f.state.state === 'connected')
    // The session string went to the edge sealed: nothing readable at rest.
    await edge.waitFor((f) => f.type === 'session_write')
    const stored = [...(edge.store.get('s1')?.values() ?? [])].join('')
    expect(stored).not.toContain('1fake:')
    // beta's address book goes to the edge even without import_contacts.
    await edge.waitFor((f) => f.type === 'contacts')
    // The password step runs SRP (two PBKDF2 rounds of 100k iterations, client and fake server) on a shared CPU.
  }, 40_000)

  it('refuses a step for a session it does not hold, or under another fence, with no_login_pending', async () => {
    net.addAccount(PHONE)
    edge.send(assign('s1'))
    await edge.waitFor((f) => f.type === 'state' && f.state.state === 'code_required')
    edge.send({ type: 'login', id: 'x1', sid: 'nope', fence: 1, step: { kind: 'code', code: '12345' } })
    expect(await edge.waitFor((f) => f.type === 'login_result' && f.id === 'x1')).toMatchObject({ outcome: { status: 'refused', error: 'no_login_pending' } })
    edge.send({ type: 'login', id: 'x2', sid: 's1', fence: 7, step: { kind: 'code', code: '12345' } })
    expect(await edge.waitFor((f) => f.type === 'login_result' && f.id === 'x2')).toMatchObject({ outcome: { status: 'refused', error: 'no_login_pending' } })
  })
})
