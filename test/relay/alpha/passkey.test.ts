// alpha passkey ("shortcake") linking through the driver, against the fake primary (test/fixtures/alpha-passkey-primary.ts):
// the whole ceremony to connected, each stanza as whatsmeow sends it, and every way it ends early, never retried.
import type { BinaryNode } from '@whiskeysockets/baileys'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { QR_FIRST_TTL_MS } from '../../../relay/alpha/login'
import { PASSKEY_ASSERTION_MAX_MS, PASSKEY_CONFIRM_WAIT_MS, PASSKEY_CONTINUATION_WAIT_MS, PASSKEY_PAIR_WAIT_MS } from '../../../relay/alpha/passkey-flow'
import { MAX_RECONNECT_MS } from '../../../relay/alpha/state'
import type { LoginOutcome, SessionState } from '../../../relay/connector'
import { PasskeyRequestOptions } from '../../../schema/passkey'
import { ackedNotifications, FakePasskeyPrimary } from '../../fixtures/alpha-passkey-primary'
import { newPasskey, signAssertion, type Passkey } from '../../fixtures/passkey-authenticator'
import { DIGITS, harness, OWN_LID, PHONE, settle, useFakeClock, type Harness } from './harness'

const ORIGIN = 'https://web.whatsapp.com'

beforeEach(useFakeClock)
afterEach(() => {
  vi.useRealTimers()
})

/** A linking socket whose QR the phone scanned, and alpha asking for the owner's passkey. */
async function scanned(opts: { inline?: boolean } = {}) {
  const h = await harness({ passkeyLinking: true })
  await h.connector.start()
  await settle()
  const sock = h.sockets.latest
  sock.pairDevice(6)
  await settle()
  const qr = stateOf(h.states, 'qr_pending')?.qr
  if (!qr) throw new Error('no QR code was reported')
  const passkey = newPasskey('whatsapp.com')
  const primary = new FakePasskeyPrimary({ rpId: 'whatsapp.com', origin: ORIGIN, passkey, phoneDigits: DIGITS })
  primary.inlineOptions = opts.inline ?? true
  primary.scan(sock, qr)
  return { h, sock, primary, passkey }
}

/** The owner's assertion for the options alpha sent, made on `origin`, through the connector (the edge's login frame). */
function giveAssertion(h: Harness, primary: FakePasskeyPrimary, passkey: Passkey, origin = ORIGIN): Promise<LoginOutcome> {
  const options = PasskeyRequestOptions.parse(JSON.parse(primary.options!))
  return h.connector.login!({ kind: 'passkey_assertion', assertion: signAssertion(passkey, options, origin) })
}

const stateOf = <K extends SessionState['state']>(states: SessionState[], kind: K) =>
  states.filter((s): s is Extract<SessionState, { state: K }> => s.state === kind).at(-1)

function mdIqs(sent: BinaryNode[]) {
  return sent.filter((n) => n.tag === 'iq' && n.attrs.xmlns === 'md')
}

describe('alpha passkey linking (tenant setting alpha_passkey_linking on)', () => {
  it('runs the ceremony from the QR scan to connected, with whatsmeow’s stanzas and the handoff proof', async () => {
    const { h, sock, primary, passkey } = await scanned()
    const t0 = Date.now()
    primary.requestPasskey()
    await settle()
    // whatsmeow acks every notification; Baileys cannot while a QR link has no `me`.
    expect(ackedNotifications(sock)).toEqual(['1'])
    expect(h.lastState()).toEqual({ state: 'passkey_required', requestOptions: primary.options, expiresAt: t0 + PASSKEY_ASSERTION_MAX_MS })
    expect(PasskeyRequestOptions.parse(JSON.parse(primary.options!))).toMatchObject({ rpId: 'whatsapp.com', userVerification: 'required' })

    // The phone scanned: no more QR codes, and no 408 when Baileys' refs would have run out.
    const before = h.states.length
    await vi.advanceTimersByTimeAsync(QR_FIRST_TTL_MS + 6 * 20_000)
    expect(h.states.slice(before).some((s) => s.state === 'qr_pending')).toBe(false)
    expect(sock.isClosed).toBe(false)

    const outcome = await giveAssertion(h, primary, passkey)
    expect(outcome).toEqual({ status: 'accepted' })
    await settle(20)
    expect(primary.refusals).toEqual([])
    expect(primary.iqs).toEqual(['ref', 'passkey_prologue', 'companion_nonce', 'encrypted_pairing_request'])
    expect(primary.handoffProof).toBe(true)
    expect(stateOf(h.states, 'passkey_code')).toEqual({ state: 'passkey_code', code: primary.code, confirm: false, expiresAt: expect.any(Number) })

    // Each IQ as whatsmeow's sendIQ: <iq xmlns="md" type to="s.whatsapp.net" id> with one child.
    const iqs = mdIqs(sock.sentNodes)
    expect(iqs.map((n) => [n.attrs.type, n.attrs.to, Array.isArray(n.content) ? n.content.map((c) => c.tag).join() : ''])).toEqual([
      ['get', '@s.whatsapp.net', 'ref'],
      ['set', '@s.whatsapp.net', 'passkey_prologue'],
      ['set', '@s.whatsapp.net', 'companion_nonce'],
      ['set', '@s.whatsapp.net', 'encrypted_pairing_request'],
    ])
    expect(iqs.every((n) => typeof n.attrs.id === 'string' && n.attrs.id.length > 0)).toBe(true)

    // pair-success was checked by Baileys' own configureSuccessfulPairing under the new ADV secret; then the 515 restart.
    expect(sock.isClosed).toBe(true)
    expect(sock.sentNodes.some((n) => n.tag === 'iq' && Array.isArray(n.content) && n.content[0]?.tag === 'pair-device-sign')).toBe(true)
    expect(h.sockets.sockets).toHaveLength(2)
    const creds = h.sockets.latest.config.auth.creds
    expect(Buffer.from(creds.advSecretKey, 'base64').equals(primary.pairingRequest!.advSecret)).toBe(true)
    h.sockets.latest.open({ lid: `${OWN_LID}:12@lid` })
    await settle()
    expect(h.lastState()).toEqual({ state: 'connected', identifier: PHONE, upstreamUserId: `${OWN_LID}@lid` })
  })

  it('takes the phone’s continuation even when it comes before the prologue’s IQ result', async () => {
    const { h, primary, passkey } = await scanned()
    primary.continueEarly = true
    primary.requestPasskey()
    await settle()
    expect(await giveAssertion(h, primary, passkey)).toEqual({ status: 'accepted' })
    await settle(20)
    expect(primary.refusals).toEqual([])
    expect(primary.iqs).toEqual(['ref', 'passkey_prologue', 'companion_nonce', 'encrypted_pairing_request'])
    expect(h.states.some((s) => s.state === 'passkey_code')).toBe(true)
    expect(h.sockets.sockets).toHaveLength(2)
  })

  it('asks alpha for the request options when the notification has none', async () => {
    const { h, primary } = await scanned({ inline: false })
    primary.requestPasskey()
    await settle(10)
    expect(primary.iqs).toEqual(['passkey_request_options'])
    expect(h.lastState()).toMatchObject({ state: 'passkey_required', requestOptions: primary.options })
  })

  it('runs the ceremony after a pairing code too (alpha acks it then, as Baileys has `me`)', async () => {
    const h = await harness({ passkeyLinking: true, linkMethod: 'pairing_code' })
    await h.connector.start()
    await settle()
    const sock = h.sockets.latest
    sock.pairDevice(6)
    await settle()
    expect(stateOf(h.states, 'pairing_code')).toBeTruthy()
    const creds = sock.config.auth.creds
    const qr = `https://wa.me/settings/linked_devices#ref,${Buffer.from(creds.noiseKey.public).toString('base64')},${Buffer.from(creds.signedIdentityKey.public).toString('base64')},${creds.advSecretKey},1`
    const passkey = newPasskey('whatsapp.com')
    const primary = new FakePasskeyPrimary({ rpId: 'whatsapp.com', origin: ORIGIN, passkey, phoneDigits: DIGITS })
    primary.scan(sock, qr)
    primary.requestPasskey()
    await settle()
    // Baileys' own ack (creds.me is set by the code request); the relay adds none.
    expect(ackedNotifications(sock)).toEqual(['1'])
    expect(await giveAssertion(h, primary, passkey)).toEqual({ status: 'accepted' })
    await settle(20)
    expect(primary.refusals).toEqual([])
    expect(h.sockets.sockets).toHaveLength(2)
  })

  it('asks the owner to confirm the code when the handoff proof has lapsed (over 5 minutes), and pairs on the confirmation', async () => {
    const { h, primary, passkey } = await scanned()
    primary.requestPasskey()
    await settle()
    await vi.advanceTimersByTimeAsync(5 * 60_000 + 1)
    expect(await giveAssertion(h, primary, passkey)).toEqual({ status: 'accepted' })
    await settle(20)
    expect(primary.handoffProof).toBe(false)
    expect(h.lastState()).toEqual({ state: 'passkey_code', code: primary.code, confirm: true, expiresAt: Date.now() + PASSKEY_CONFIRM_WAIT_MS })
    expect(primary.iqs).toEqual(['ref', 'passkey_prologue', 'companion_nonce'])
    expect(await h.connector.login!({ kind: 'passkey_confirm' })).toEqual({ status: 'accepted' })
    await settle(20)
    expect(primary.iqs.at(-1)).toBe('encrypted_pairing_request')
    expect(h.sockets.sockets).toHaveLength(2)
  })

  it('refuses an assertion nothing waits for, and a second one for the same ceremony', async () => {
    const { h, primary, passkey } = await scanned()
    const early = signAssertion(passkey, { challenge: 'A'.repeat(43) }, ORIGIN)
    expect(await h.connector.login!({ kind: 'passkey_assertion', assertion: early })).toMatchObject({ status: 'refused', error: 'no_login_pending' })
    primary.requestPasskey()
    await settle()
    const options = PasskeyRequestOptions.parse(JSON.parse(primary.options!))
    const assertion = signAssertion(passkey, options, ORIGIN)
    primary.holdContinuation = true
    expect(await h.connector.login!({ kind: 'passkey_assertion', assertion })).toEqual({ status: 'accepted' })
    expect(await h.connector.login!({ kind: 'passkey_assertion', assertion })).toMatchObject({ status: 'refused', error: 'no_login_pending' })
    expect(primary.iqs.filter((n) => n === 'passkey_prologue')).toHaveLength(1)
  })

  it('ends as passkey_expired when the owner gives no assertion in time, and does not link again by itself', async () => {
    const { h, sock, primary } = await scanned()
    primary.requestPasskey()
    await settle()
    await vi.advanceTimersByTimeAsync(PASSKEY_ASSERTION_MAX_MS)
    await settle()
    expect(h.lastState()).toMatchObject({ state: 'disconnected', problem: 'passkey_expired' })
    expect(sock.isClosed).toBe(true)
    await vi.advanceTimersByTimeAsync(10 * MAX_RECONNECT_MS)
    expect(h.sockets.sockets).toHaveLength(1)
    expect(h.store.atRest.size).toBe(0)
  })

  it('ends as passkey_rejected when alpha refuses the assertion (another origin), without trying again', async () => {
    const { h, sock, primary, passkey } = await scanned()
    primary.requestPasskey()
    await settle()
    const outcome = await giveAssertion(h, primary, passkey, 'https://evil.example')
    expect(outcome).toMatchObject({ status: 'refused', error: 'login_failed' })
    await settle()
    expect(primary.refusals).toEqual(['passkey: origin https://evil.example'])
    expect(h.lastState()).toMatchObject({ state: 'disconnected', problem: 'passkey_rejected' })
    expect(sock.isClosed).toBe(true)
    await vi.advanceTimersByTimeAsync(10 * MAX_RECONNECT_MS)
    expect(primary.iqs.filter((n) => n === 'passkey_prologue')).toHaveLength(1)
    expect(h.sockets.sockets).toHaveLength(1)
  })

  it('ends as passkey_timeout when the phone never continues after the prologue', async () => {
    const { h, primary, passkey } = await scanned()
    primary.holdContinuation = true
    primary.requestPasskey()
    await settle()
    expect(await giveAssertion(h, primary, passkey)).toEqual({ status: 'accepted' })
    await vi.advanceTimersByTimeAsync(PASSKEY_CONTINUATION_WAIT_MS - 1)
    expect(h.lastState()).toEqual({ state: 'connecting' })
    await vi.advanceTimersByTimeAsync(1)
    await settle()
    expect(h.lastState()).toMatchObject({ state: 'disconnected', problem: 'passkey_timeout' })
  })

  it('ends as passkey_timeout when pair-success never comes, and when an IQ goes unanswered', async () => {
    const a = await scanned()
    a.primary.holdPairSuccess = true
    a.primary.requestPasskey()
    await settle()
    await giveAssertion(a.h, a.primary, a.passkey)
    await settle(20)
    expect(a.primary.iqs.at(-1)).toBe('encrypted_pairing_request')
    await vi.advanceTimersByTimeAsync(PASSKEY_PAIR_WAIT_MS)
    await settle()
    expect(a.h.lastState()).toMatchObject({ state: 'disconnected', problem: 'passkey_timeout' })

    const b = await scanned()
    b.primary.silent.add('companion_nonce')
    b.primary.requestPasskey()
    await settle()
    await giveAssertion(b.h, b.primary, b.passkey)
    await settle(10)
    await vi.advanceTimersByTimeAsync(60_000)
    await settle()
    expect(b.h.lastState()).toMatchObject({ state: 'disconnected', problem: 'passkey_timeout' })
    expect(b.primary.iqs).toEqual(['ref', 'passkey_prologue', 'companion_nonce'])
  })

  it('ends as passkey_rejected when alpha refuses the nonce', async () => {
    const { h, primary, passkey } = await scanned()
    primary.refuse.set('companion_nonce', 400)
    primary.requestPasskey()
    await settle()
    await giveAssertion(h, primary, passkey)
    await settle(20)
    expect(h.lastState()).toMatchObject({ state: 'disconnected', problem: 'passkey_rejected' })
    expect(primary.iqs).toEqual(['ref', 'passkey_prologue', 'companion_nonce'])
  })

  it('ends as passkey_timeout, not a new QR code, when the socket drops mid-ceremony', async () => {
    const { h, sock, primary } = await scanned()
    primary.requestPasskey()
    await settle()
    sock.close(428, 'Connection Closed')
    await settle()
    expect(h.lastState()).toMatchObject({ state: 'disconnected', problem: 'passkey_timeout' })
    await vi.advanceTimersByTimeAsync(10 * MAX_RECONNECT_MS)
    expect(h.sockets.sockets).toHaveLength(1)
  })

  it('rejects a continuation that comes before any prologue', async () => {
    const { h, sock } = await scanned()
    sock.notify({ tag: 'notification', attrs: { from: '@s.whatsapp.net', type: 'crsc_continuation', id: '9' }, content: [] })
    await settle()
    expect(h.lastState()).toMatchObject({ state: 'disconnected', problem: 'passkey_rejected' })
  })
})

describe('alpha passkey linking off (the default)', () => {
  it('keeps Baileys’ own QR rotation and ends linking with passkey_required, pointing at the guide', async () => {
    const h = await harness()
    await h.connector.start()
    await settle()
    const sock = h.sockets.latest
    sock.pairDevice(6)
    await settle()
    expect(sock.baileysQr).toBe(true)
    sock.passkeyPrompt()
    await settle()
    expect(h.lastState()).toMatchObject({ state: 'disconnected', problem: 'passkey_required', message: expect.stringContaining('docs/channels/alpha.md') })
    expect(ackedNotifications(sock)).toEqual([])
    expect(mdIqs(sock.sentNodes)).toEqual([])
    expect(await h.connector.login!({ kind: 'passkey_confirm' })).toMatchObject({ status: 'refused', error: 'no_login_pending' })
  })
})
