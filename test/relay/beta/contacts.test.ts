/** The address book kept current: synced on connect, re-checked with beta's hash on a timer, and on change updates. */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { CONTACTS_DEBOUNCE_MS, CONTACTS_SYNC_MS } from '../../../relay/beta/contacts'
import { FakeBetaNetwork } from '../../fixtures/beta-network'
import { betaHarness, FRIEND, PHONE, settle, STRANGER, useFakeClock } from './harness'

async function connected(net: FakeBetaNetwork, contactsSyncMs?: number) {
  const h = await betaHarness({ net, contactsSyncMs })
  await h.connector.start()
  await h.connector.login!({ kind: 'code', code: net.codeFor(PHONE) })
  await settle()
  return h
}

function network() {
  const net = new FakeBetaNetwork()
  const friend = net.addAccount(FRIEND, { firstName: 'Fran', lastName: 'Friend' })
  net.addAccount(STRANGER, { firstName: 'Sam' })
  net.addAccount(PHONE, { contacts: [friend.userId] })
  return net
}

describe('beta address book sync', () => {
  beforeEach(useFakeClock)
  afterEach(() => vi.useRealTimers())

  it('asks again every interval with the hash, which costs one unchanged answer and reports nothing', async () => {
    const net = network()
    const h = await connected(net)
    expect(h.contacts).toEqual([[expect.objectContaining({ phone: FRIEND, name: 'Fran Friend' })]])
    vi.advanceTimersByTime(CONTACTS_SYNC_MS)
    await settle()
    expect(net.calls.filter((c) => c === 'contacts.GetContacts')).toHaveLength(2)
    expect(h.contacts).toHaveLength(1)
  })

  it('picks up a book changed in the app on the next interval (an injected one) and hands the edge only the new person', async () => {
    const net = network()
    const h = await connected(net, 60_000)
    net.account(PHONE).contacts.push(net.account(STRANGER).userId)
    vi.advanceTimersByTime(60_000)
    await settle()
    expect(h.contacts.at(-1)).toEqual([expect.objectContaining({ phone: STRANGER, name: 'Sam' })])
    // STRANGER is now an existing contact: a send by phone goes.
    const { upstreamId } = await h.connector.send({ messageId: 'm1', to: { phone: STRANGER, peerId: null }, text: 'hi Sam', mediaUrl: null })
    expect(net.sent.at(-1)).toMatchObject({ to: net.account(STRANGER).userId, id: Number(upstreamId) })
  })

  it('syncs soon after beta says the book changed (UpdateContactsReset), once for a burst', async () => {
    const net = network()
    const h = await connected(net)
    net.setContacts(net.account(PHONE), [
      { phone: FRIEND, name: null },
      { phone: STRANGER, name: 'Sam Stranger' },
    ])
    net.setContacts(net.account(PHONE), [
      { phone: FRIEND, name: null },
      { phone: STRANGER, name: 'Sam Stranger' },
    ])
    await settle()
    expect(h.contacts).toHaveLength(1)
    vi.advanceTimersByTime(CONTACTS_DEBOUNCE_MS)
    await settle()
    expect(net.calls.filter((c) => c === 'contacts.GetContacts')).toHaveLength(2)
    expect(h.contacts.at(-1)).toEqual([expect.objectContaining({ phone: STRANGER, name: 'Sam Stranger' })])
  })

  it('stops syncing when the session stops', async () => {
    const net = network()
    const h = await connected(net)
    await h.connector.stop()
    vi.advanceTimersByTime(CONTACTS_SYNC_MS * 3)
    await settle()
    expect(net.calls.filter((c) => c === 'contacts.GetContacts')).toHaveLength(1)
  })
})
