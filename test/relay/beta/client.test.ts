import { Api } from 'telegram'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { isPermanentSendError, type OutboundMessage } from '../../../relay/connector'
import { decodePeerId, encodePeerId } from '../../../relay/beta/ids'
import { PROBE_INTERVAL_MS } from '../../../relay/beta/health'
import { betaHarness, FRIEND, loggedIn, PHONE, settle, STRANGER, useFakeClock } from './harness'

function msg(id: string, to: OutboundMessage['to'], text = `text ${id}`, mediaUrl: string | null = null): OutboundMessage {
  return { messageId: id, to, text, mediaUrl }
}

describe('beta inbound', () => {
  beforeEach(useFakeClock)
  afterEach(() => vi.useRealTimers())

  it('turns a private message into inbound with the sender phone, names, username and a peer id carrying the access hash', async () => {
    const h = await loggedIn()
    const id = h.net.write(FRIEND, PHONE, 'hello there')
    await settle()
    const friend = h.net.account(FRIEND)
    const me = h.net.account(PHONE)
    expect(h.inbound).toEqual([
      {
        upstreamId: String(id),
        from: {
          id: encodePeerId(friend.userId, h.net.accessHash(me.userId, friend.userId).toString()),
          phone: FRIEND,
          lid: null,
          name: 'Fran Friend',
          username: 'fran',
        },
        text: 'hello there',
        media: null,
        sentAt: Date.now() - (Date.now() % 1000),
      },
    ])
  })

  it('replies by the peer id after a restart, when the new process has seen nothing of the sender', async () => {
    const h = await loggedIn()
    h.net.write(STRANGER, PHONE, 'hi, we have not met')
    await settle()
    const peerId = h.inbound[0]!.from.id
    await h.connector.stop()
    const again = await loggedIn({ net: h.net, store: h.store })
    const { upstreamId } = await again.connector.send(msg('m1', { phone: null, peerId }))
    expect(h.net.sent.at(-1)).toMatchObject({ to: h.net.account(STRANGER).userId, text: 'text m1', id: Number(upstreamId) })
  })

  it('reports read for every message sent up to maxId in that chat, once each, surviving a restart', async () => {
    const h = await loggedIn()
    const to = { phone: FRIEND, peerId: null }
    const a = await h.connector.send(msg('m1', to))
    const b = await h.connector.send(msg('m2', to))
    await h.connector.stop()
    const again = await loggedIn({ net: h.net, store: h.store })
    const c = await again.connector.send(msg('m3', to))
    h.net.readBy(FRIEND, PHONE, Number(b.upstreamId))
    await settle()
    expect(again.receipts.map((r) => [r.upstreamId, r.status])).toEqual([
      [a.upstreamId, 'read'],
      [b.upstreamId, 'read'],
    ])
    h.net.readBy(FRIEND, PHONE, Number(c.upstreamId))
    await settle()
    expect(again.receipts.map((r) => r.upstreamId)).toEqual([a.upstreamId, b.upstreamId, c.upstreamId])
  })

  it('hands the address book to the edge on connect', async () => {
    const h = await loggedIn()
    expect(h.contacts).toHaveLength(1)
    expect(h.contacts[0]).toEqual([expect.objectContaining({ phone: FRIEND, name: 'Fran Friend', username: 'fran', hasChat: false })])
    expect(decodePeerId(h.contacts[0]![0]!.id)?.userId).toBe(h.net.account(FRIEND).userId)
  })
})

describe('beta sending', () => {
  beforeEach(useFakeClock)
  afterEach(() => vi.useRealTimers())

  it('sends to an address-book contact by phone and answers the upstream message id', async () => {
    const h = await loggedIn()
    const { upstreamId } = await h.connector.send(msg('m1', { phone: FRIEND, peerId: null }, 'hi Fran'))
    expect(h.net.sent).toEqual([expect.objectContaining({ to: h.net.account(FRIEND).userId, text: 'hi Fran', id: Number(upstreamId), file: null })])
  })

  it('refuses a phone that is not an existing contact with beta_requires_existing_contact, for good', async () => {
    const h = await loggedIn()
    const err = await h.connector.send(msg('m1', { phone: STRANGER, peerId: null })).catch((e: unknown) => e)
    expect(isPermanentSendError(err)).toBe(true)
    expect(String(err)).toContain('beta_requires_existing_contact')
    expect(h.net.sent).toHaveLength(0)
  })

  it('fetches media through the guarded fetcher and uploads the bytes, never the URL', async () => {
    const h = await loggedIn()
    await h.connector.send(msg('m1', { phone: FRIEND, peerId: null }, 'a photo', 'https://media.example.com/p.jpg'))
    expect(h.fetchMedia).toHaveBeenCalledWith('https://media.example.com/p.jpg')
    expect(h.net.calls.at(-1)).toBe('messages.SendMedia')
    expect(h.net.sent.at(-1)).toMatchObject({ text: 'a photo', file: { name: 'photo.jpg', bytes: Buffer.from('jpeg-bytes') } })
  })

  it('pauses on a flood wait, reports slowed until it ends, then sends the same message and the rest in order', async () => {
    const h = await loggedIn()
    const to = { phone: FRIEND, peerId: null }
    h.net.floodNext('messages.SendMessage', 30)
    const started = Date.now()
    const results = ['m1', 'm2', 'm3'].map((id) => h.connector.send(msg(id, to)))
    await settle()
    expect(h.last()).toEqual({ state: 'slowed', problem: 'flood_wait', message: expect.any(String), until: started + 30_000 })
    expect(h.net.sent).toHaveLength(0)
    vi.advanceTimersByTime(29_999)
    await settle()
    expect(h.net.sent).toHaveLength(0)
    vi.advanceTimersByTime(1)
    await Promise.all(results)
    expect(h.net.sent.map((s) => s.text)).toEqual(['text m1', 'text m2', 'text m3'])
    expect(h.last()?.state).toBe('connected')
  })

  it('fails a message beta answers PEER_FLOOD with a clear error and reports restricted (stranger_flag), while inbound still arrives', async () => {
    const h = await loggedIn()
    h.net.account(PHONE).stranger = true
    const err = await h.connector.send(msg('m1', { phone: FRIEND, peerId: null })).catch((e: unknown) => e)
    expect(isPermanentSendError(err)).toBe(true)
    expect(String(err)).toMatch(/stranger_flag.*PEER_FLOOD/)
    await settle()
    expect(h.last()).toMatchObject({ state: 'restricted', problem: 'stranger_flag', until: null })
    h.net.write(FRIEND, PHONE, 'still here')
    await settle()
    expect(h.inbound.map((m) => m.text)).toEqual(['still here'])
  })

  /** A session whose account beta has spam-limited: FRIEND is a mutual contact, STRANGER wrote to it but is not one. */
  async function spamLimited() {
    const h = await loggedIn()
    const me = h.net.account(PHONE)
    h.net.account(FRIEND).contacts.push(me.userId)
    h.net.write(STRANGER, PHONE, 'hi, we have not met')
    await settle()
    me.stranger = true
    return { h, stranger: { phone: null, peerId: h.inbound[0]!.from.id } }
  }

  it('still writes to a mutual contact after PEER_FLOOD, and that success clears the restriction', async () => {
    const { h, stranger } = await spamLimited()
    await expect(h.connector.send(msg('m1', stranger))).rejects.toThrow(/PEER_FLOOD/)
    await settle()
    expect(h.last()).toMatchObject({ state: 'restricted', problem: 'stranger_flag' })
    const { upstreamId } = await h.connector.send(msg('m2', { phone: FRIEND, peerId: null }))
    await settle()
    expect(h.net.sent).toEqual([expect.objectContaining({ to: h.net.account(FRIEND).userId, id: Number(upstreamId) })])
    expect(h.last()).toMatchObject({ state: 'connected' })
    // The next stranger is refused again, and restricts again.
    await expect(h.connector.send(msg('m3', stranger))).rejects.toThrow(/PEER_FLOOD/)
    await settle()
    expect(h.last()).toMatchObject({ state: 'restricted', problem: 'stranger_flag' })
  })

  it('fails the sends already waiting when PEER_FLOOD restricts the account (the gateway fails its queue then), and tries the ones after', async () => {
    const { h, stranger } = await spamLimited()
    const waiting = [h.connector.send(msg('m1', stranger)), h.connector.send(msg('m2', { phone: FRIEND, peerId: null }))].map((p) => p.catch((e: unknown) => e))
    const [first, second] = await Promise.all(waiting)
    expect(String(first)).toMatch(/PEER_FLOOD/)
    expect(isPermanentSendError(second)).toBe(true)
    expect(String(second)).toMatch(/stranger_flag/)
    expect(h.net.calls.filter((c) => c === 'messages.SendMessage')).toHaveLength(1)
    await h.connector.send(msg('m3', { phone: FRIEND, peerId: null }))
    expect(h.net.sent.map((s) => s.text)).toEqual(['text m3'])
  })

  it('treats AUTH_KEY_DUPLICATED as a logout: wipes the session, reports logged_out, and connecting again logs in anew', async () => {
    const h = await loggedIn()
    h.net.duplicate(h.net.account(PHONE))
    await h.connector.send(msg('m1', { phone: FRIEND, peerId: null })).catch(() => undefined)
    await settle()
    expect(h.last()).toMatchObject({ state: 'disconnected', problem: 'logged_out', message: expect.stringContaining('AUTH_KEY_DUPLICATED') })
    expect(h.store.clears).toBe(1)
    expect(h.net.clients.at(-1)!.destroyed).toBe(true)
    const calls = h.net.calls.length
    vi.advanceTimersByTime(PROBE_INTERVAL_MS * 4)
    await settle()
    expect(h.net.calls).toHaveLength(calls)
    // "Connect again" does not resume the dead key: it starts a new login.
    await h.connector.start()
    expect(h.last()).toMatchObject({ state: 'code_required' })
  })

  it('wipes a stored session whose key beta reports duplicated at resume, and reports logged_out', async () => {
    const h = await loggedIn()
    await h.connector.stop()
    h.net.duplicate(h.net.account(PHONE))
    const again = await betaHarness({ net: h.net, store: h.store })
    await again.connector.start()
    await settle()
    expect(again.last()).toMatchObject({ state: 'disconnected', problem: 'logged_out' })
    expect(h.store.clears).toBe(1)
  })

  it('sends a relay retry of one message as the same send (random_id from the message id): the person gets it once', async () => {
    const h = await loggedIn()
    const to = { phone: FRIEND, peerId: null }
    h.net.loseAnswerNext('messages.SendMessage')
    const lost = await h.connector.send(msg('m1', to)).catch((e: unknown) => e)
    expect(lost).toBeInstanceOf(Error)
    expect(isPermanentSendError(lost)).toBe(false)
    const again = await h.connector.send(msg('m1', to))
    expect(h.net.sent).toEqual([expect.objectContaining({ text: 'text m1', id: Number(again.upstreamId) })])
    const [a, b] = h.net.requestsOf(Api.messages.SendMessage)
    expect(String(a!.randomId)).toBe(String(b!.randomId))
    // Another message is another send, and the read receipt names the message once.
    const other = await h.connector.send(msg('m2', to))
    expect(h.net.sent).toHaveLength(2)
    h.net.readBy(FRIEND, PHONE, Number(other.upstreamId))
    await settle()
    expect(h.receipts.map((r) => r.upstreamId)).toEqual([again.upstreamId, other.upstreamId])
  })

  it('sends a relay retry of a media message as the same send too', async () => {
    const h = await loggedIn()
    const m = msg('m1', { phone: FRIEND, peerId: null }, 'a photo', 'https://media.example.com/p.jpg')
    h.net.loseAnswerNext('messages.SendMedia')
    await expect(h.connector.send(m)).rejects.toThrow()
    const again = await h.connector.send(m)
    expect(h.net.sent).toEqual([expect.objectContaining({ text: 'a photo', id: Number(again.upstreamId) })])
  })
})

describe('beta session health', () => {
  beforeEach(useFakeClock)
  afterEach(() => vi.useRealTimers())

  it('finds a session revoked elsewhere within a minute and reports logged_out, wiping it', async () => {
    const h = await loggedIn()
    h.net.revoke(h.net.account(PHONE))
    vi.advanceTimersByTime(60_000)
    await settle()
    expect(h.last()).toMatchObject({ state: 'disconnected', problem: 'logged_out' })
    expect(h.store.clears).toBe(1)
  })

  it('reports a banned account as restricted (blocked_by_beta) from the probe', async () => {
    const h = await loggedIn()
    h.net.rpcNext('updates.GetState', 'USER_DEACTIVATED_BAN', 401)
    vi.advanceTimersByTime(PROBE_INTERVAL_MS)
    await settle()
    expect(h.last()).toMatchObject({ state: 'restricted', problem: 'blocked_by_beta' })
  })

  it('logs out upstream and wipes the session on logout', async () => {
    const h = await loggedIn()
    await h.connector.logout()
    expect(h.net.calls).toContain('auth.LogOut')
    expect(h.store.clears).toBe(1)
    expect(h.last()).toMatchObject({ state: 'disconnected', problem: 'logged_out' })
  })
})
