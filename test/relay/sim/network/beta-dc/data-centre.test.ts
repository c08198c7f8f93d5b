/**
 * The fake beta data centre against the real, unmodified GramJS TelegramClient over TCP: the handshake on a minted
 * session (bad_server_salt, new_session_created, config), both TCP transports GramJS speaks, an unknown key answered
 * -404, logins, updates pushed only to the connected session, updates.GetDifference (whole, sliced, too long),
 * ping_delay_disconnect, and the link faults (drop, refuse, withhold).
 */
import bigInt from 'big-integer'
import { Api } from 'telegram'
import { ConnectionTCPAbridged } from 'telegram/network'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { SIM_BETA_CREDS, SimBetaNetwork } from '../../../../../relay/sim/network/beta-network'
import { BetaDataCentre } from '../../../../../relay/sim/network/beta-dc/server'
import { gramClients } from '../../../../fixtures/gram-client'

const PHONE = '+15557710001'
const FRIEND = '+15557710002'

let net: SimBetaNetwork
let dc: BetaDataCentre
const gram = gramClients(() => dc)

beforeEach(async () => {
  net = new SimBetaNetwork({ creds: SIM_BETA_CREDS, autoRegister: true })
  dc = new BetaDataCentre(net)
  await dc.listen()
})
afterEach(async () => {
  await gram.destroyAll()
  await dc.close()
})

const loggedIn = (connection?: typeof ConnectionTCPAbridged) => gram.loggedIn(PHONE, connection)
const write = (text: string, from = FRIEND) => net.inbound(net.account(from), net.account(PHONE), text)
const texts = (d: Api.updates.TypeDifference) => ('newMessages' in d ? d.newMessages.map((m) => (m instanceof Api.Message ? m.message : '')) : [])

describe('the fake beta data centre', { timeout: 30_000 }, () => {
  it('takes the real client through bad_server_salt and new_session_created to its config, then a code login', async () => {
    const { c } = await loggedIn()
    expect(dc.stats).toMatchObject({ badSalts: 1, newSessions: 1, unknownKeys: 0 })
    const me = await c.getMe()
    expect(me.phone).toBe(PHONE.slice(1))
    expect(await c.invoke(new Api.updates.GetState())).toMatchObject({ pts: 1, qts: 0, seq: 0 })
  })

  it('speaks the abridged transport too, and answers a key it never issued with -404', async () => {
    const { c } = await loggedIn(ConnectionTCPAbridged)
    expect(await c.invoke(new Api.updates.GetState())).toBeInstanceOf(Api.updates.State)

    const forged = await dc.mintSession(null)
    // The same layout with a key the data centre does not know.
    const bytes = Buffer.from(forged.slice(1), 'base64')
    bytes.writeUInt8(bytes.readUInt8(bytes.length - 1) ^ 0xff, bytes.length - 1)
    const lost = await gram.open(`1${bytes.toString('base64')}`)
    // GramJS reads -404 as a broken auth key and stops there: its connect() never finishes.
    let finished = false
    void lost.c.connect().finally(() => (finished = true))
    await expect.poll(() => dc.stats.unknownKeys).toBe(1)
    expect(finished).toBe(false)
  })

  it('pushes only to the session connected now, and the difference brings what a session missed, in slices', async () => {
    const first = await loggedIn()
    write('one')
    await expect.poll(() => first.updates.filter((u) => u instanceof Api.UpdateNewMessage)).toHaveLength(1)
    const saved = first.c.session.save()
    const state = await first.c.invoke(new Api.updates.GetState())
    await first.c.destroy()

    net.updates.sliceSize = 2
    for (const t of ['two', 'three', 'four', 'five', 'six']) write(t)
    const again = await gram.open(String(saved))
    expect(await again.c.connect()).toBe(true)
    await new Promise((r) => setTimeout(r, 200))
    // Nothing of the backlog is pushed on connect: the session asks.
    expect(again.updates.filter((u) => u instanceof Api.UpdateNewMessage)).toEqual([])
    const got: string[] = []
    let from = { pts: state.pts, date: state.date, qts: 0 }
    for (;;) {
      const d = await again.c.invoke(new Api.updates.GetDifference(from))
      got.push(...texts(d))
      if (d instanceof Api.updates.DifferenceSlice) from = { pts: d.intermediateState.pts, date: d.intermediateState.date, qts: 0 }
      else {
        expect(d).toBeInstanceOf(Api.updates.Difference)
        if (d instanceof Api.updates.Difference) expect(d.state.pts).toBe(state.pts + 5)
        break
      }
    }
    expect(got).toEqual(['two', 'three', 'four', 'five', 'six'])
    expect(await again.c.invoke(new Api.updates.GetDifference({ ...from, pts: state.pts + 5 }))).toBeInstanceOf(Api.updates.DifferenceEmpty)
    expect(await again.c.invoke(new Api.updates.GetDifference({ ...from, pts: state.pts, ptsTotalLimit: 3 }))).toBeInstanceOf(Api.updates.DifferenceTooLong)
    net.account(PHONE).box.forget(3)
    expect(await again.c.invoke(new Api.updates.GetDifference({ ...from, pts: state.pts }))).toMatchObject({ pts: state.pts + 5 })
  })

  it('withholds an update so the session sees a pts gap, and a short message carries no user', async () => {
    const { c, updates } = await loggedIn()
    net.account(PHONE).withhold = 1
    write('withheld')
    net.inbound(net.account(FRIEND), net.account(PHONE), 'short', null, true)
    await expect.poll(() => updates.filter((u) => u instanceof Api.UpdateShortMessage)).toHaveLength(1)
    const short = updates.find((u): u is Api.UpdateShortMessage => u instanceof Api.UpdateShortMessage)!
    expect(short).toMatchObject({ message: 'short', pts: 3, ptsCount: 1 })
    expect(updates.some((u) => u instanceof Api.UpdateNewMessage)).toBe(false)
    expect(texts(await c.invoke(new Api.updates.GetDifference({ pts: 1, date: 0, qts: 0 })))).toEqual(['withheld', 'short'])
  })

  it('answers pings, and closes the connection when the next ping is late (ping_delay_disconnect)', async () => {
    const { c } = await loggedIn()
    const pong = await c.invoke(new Api.PingDelayDisconnect({ pingId: bigInt(42), disconnectDelay: 1 }))
    expect(pong).toMatchObject({ pingId: bigInt(42) })
    expect(dc.stats.pings).toBe(1)
    // The library's own ping is 9 s away: the server hangs up, and the library reconnects by itself (a new session).
    await expect.poll(() => dc.stats.newSessions, { timeout: 10_000 }).toBe(2)
    expect(await c.invoke(new Api.updates.GetState())).toBeInstanceOf(Api.updates.State)
  })

  it('drops connections and refuses new ones for a while; the client gets back once they are accepted again', async () => {
    const { c } = await loggedIn()
    dc.refuse(1500)
    await expect.poll(() => dc.connections.size).toBe(0)
    expect(dc.faults().refused_seconds).toBeGreaterThan(0)
    const during = Date.now()
    const state = await c.invoke(new Api.updates.GetState())
    expect(state).toBeInstanceOf(Api.updates.State)
    expect(Date.now() - during).toBeGreaterThan(1000)
    expect(dc.drop(net.account(PHONE))).toBe(1)
    expect(await c.invoke(new Api.updates.GetState())).toBeInstanceOf(Api.updates.State)
  })
})
