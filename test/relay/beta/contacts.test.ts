/** The address book kept current: synced on connect, re-checked with beta's hash on a timer, and on change updates. */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { CONTACTS_DEBOUNCE_MS, CONTACTS_FIRST_SYNC_WAIT_MS, CONTACTS_SYNC_MS } from '../../../relay/beta/contacts'
import { isPermanentSendError } from '../../../relay/connector'
import { FakeBetaNetwork } from '../../fixtures/beta-network'
import { betaHarness, FRIEND, loggedIn, PHONE, settle, STRANGER, useFakeClock } from './harness'

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

describe('beta sends by phone right after connecting', () => {
  beforeEach(useFakeClock)
  afterEach(() => vi.useRealTimers())

  const byPhone = (phone: string, id = 'm1') => ({ messageId: id, to: { phone, peerId: null }, text: `text ${id}`, mediaUrl: null })

  /** A logged-in session stopped, then resumed by a new process whose first address-book sync beta holds. */
  async function resumedWithBookHeld() {
    const first = await loggedIn()
    await first.connector.stop()
    const release = first.net.holdNext('contacts.GetContacts')
    const h = await betaHarness({ net: first.net, store: first.store })
    await h.connector.start()
    await settle()
    expect(h.last()).toMatchObject({ state: 'connected' })
    return { h, release }
  }

  it('holds a send by phone until the first address-book sync has answered, instead of refusing it against an empty book', async () => {
    const { h, release } = await resumedWithBookHeld()
    let settled = false
    const sending = h.connector.send(byPhone(FRIEND)).finally(() => {
      settled = true
    })
    await settle()
    expect(settled).toBe(false)
    release()
    const { upstreamId } = await sending
    expect(h.net.sent).toEqual([expect.objectContaining({ to: h.net.account(FRIEND).userId, id: Number(upstreamId) })])
  })

  it('refuses a phone outside the book for good only once the book has loaded', async () => {
    const { h, release } = await resumedWithBookHeld()
    const refused = h.connector.send(byPhone(STRANGER)).catch((e: unknown) => e)
    await settle()
    release()
    const err = await refused
    expect(isPermanentSendError(err)).toBe(true)
    expect(String(err)).toContain('beta_requires_existing_contact')
  })

  it('answers a transient failure (the gateway retries) when the book cannot load in time, never beta_requires_existing_contact', async () => {
    const { h, release } = await resumedWithBookHeld()
    const sending = h.connector.send(byPhone(FRIEND)).catch((e: unknown) => e)
    await settle()
    vi.advanceTimersByTime(CONTACTS_FIRST_SYNC_WAIT_MS)
    const err = await sending
    expect(err).toBeInstanceOf(Error)
    expect(isPermanentSendError(err)).toBe(false)
    expect(String(err)).not.toContain('beta_requires_existing_contact')
    release()
    await settle()
    // The retry finds the book loaded.
    await h.connector.send(byPhone(FRIEND))
    expect(h.net.sent).toHaveLength(1)
  })

  it('asks for the book again when the first sync failed, before judging a phone', async () => {
    const first = await loggedIn()
    await first.connector.stop()
    first.net.rpcNext('contacts.GetContacts', 'RPC_CALL_FAIL', 500)
    const h = await betaHarness({ net: first.net, store: first.store })
    await h.connector.start()
    await settle()
    const { upstreamId } = await h.connector.send(byPhone(FRIEND))
    expect(h.net.sent).toEqual([expect.objectContaining({ id: Number(upstreamId) })])
    expect(h.net.calls.filter((c) => c === 'contacts.GetContacts')).toHaveLength(3)
  })
})
