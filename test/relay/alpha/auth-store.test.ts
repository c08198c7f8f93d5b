// The alpha auth state over a SessionStore: BufferJSON round trip through a sealed store, batching, durability, wipe.
import { Curve, initAuthCreds, proto } from '@whiskeysockets/baileys'
import type { SignalDataSet } from '@whiskeysockets/baileys'
import pino from 'pino'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { CREDS_KEY, loadAlphaAuth, serialize, WRITE_RETRY_MS } from '../../../relay/alpha/auth-store'
import { sealedSessionStore } from '../../fixtures/session-store'

const log = pino({ level: 'silent' })

/** One entry of every key type Baileys 7 writes, with real key material where the type holds keys. */
function everyKeyType(): SignalDataSet {
  const preKey = Curve.generateKeyPair()
  return {
    'pre-key': { '1': preKey },
    session: { '15551234567.0': new Uint8Array([1, 2, 3, 250]) },
    'sender-key': { 'group@g.us::15551234567::0': new Uint8Array([9, 8, 7]) },
    'sender-key-memory': { 'group@g.us': { '15551234567:0@s.whatsapp.net': true } },
    'app-state-sync-key': {
      'AAAAAQ==': proto.Message.AppStateSyncKeyData.fromObject({
        keyData: Buffer.alloc(32, 7),
        fingerprint: { rawId: 5, currentIndex: 1, deviceIndexes: [0, 1] },
        timestamp: 1_700_000_000,
      }),
    },
    'app-state-sync-version': { regular: { version: 3, hash: Buffer.alloc(128, 1), indexValueMap: { 'a/b+c=': { valueMac: Buffer.alloc(32, 4) } } } },
    'lid-mapping': { '15551234567': '99000000000777', '99000000000777_reverse': '15551234567' },
    'device-list': { '15551234567': ['0', '12'] },
    tctoken: { '99000000000777@lid': { token: Buffer.from('token-bytes'), timestamp: '1700000000' } },
    'identity-key': { '99000000000777.0': new Uint8Array(Buffer.alloc(33, 5)) },
  }
}

afterEach(() => {
  vi.useRealTimers()
})

describe('alpha auth store', () => {
  it('round-trips real creds and every key type through a sealed store into a new process', async () => {
    const store = sealedSessionStore()
    const first = await loadAlphaAuth(store, log, { fresh: false })
    const data = everyKeyType()
    await first.saveCreds()
    await first.state.keys.set(data)

    for (const sealed of store.atRest.values()) expect(sealed).not.toContain('Buffer')
    expect(store.atRest.has(CREDS_KEY)).toBe(true)
    expect(store.atRest.has('lid-mapping/99000000000777_reverse')).toBe(true)

    const second = await loadAlphaAuth(store, log, { fresh: false })
    const creds = second.state.creds
    expect(Buffer.isBuffer(creds.noiseKey.private)).toBe(true)
    expect(Buffer.from(creds.noiseKey.private).equals(Buffer.from(first.state.creds.noiseKey.private))).toBe(true)
    expect(Buffer.from(creds.signedPreKey.signature).equals(Buffer.from(first.state.creds.signedPreKey.signature))).toBe(true)
    expect(creds.registrationId).toBe(first.state.creds.registrationId)
    expect(creds.advSecretKey).toBe(first.state.creds.advSecretKey)

    for (const [type, entries] of Object.entries(data) as Array<[keyof SignalDataSet, Record<string, unknown>]>) {
      const ids = Object.keys(entries)
      const back = await second.state.keys.get(type, ids)
      // Compared as BufferJSON: a Uint8Array written comes back as a Buffer with the same bytes, which is what Baileys reads.
      for (const id of ids) expect(serialize(back[id]), `${type}/${id}`).toBe(serialize(entries[id]))
    }
    const [appKey] = Object.values(await second.state.keys.get('app-state-sync-key', ['AAAAAQ==']))
    expect(appKey).toBeInstanceOf(proto.Message.AppStateSyncKeyData)
    expect(Buffer.from(appKey!.keyData!).equals(Buffer.alloc(32, 7))).toBe(true)
    const [preKey] = Object.values(await second.state.keys.get('pre-key', ['1']))
    expect(Buffer.isBuffer(preKey!.private)).toBe(true)
  })

  it('resolves a key write only once the store has made it durable', async () => {
    const store = sealedSessionStore()
    const auth = await loadAlphaAuth(store, log, { fresh: false })
    const release = store.holdWrites()
    let done = false
    const write = Promise.resolve(auth.state.keys.set({ 'device-list': { '1555': ['0'] } })).then(() => (done = true))
    await new Promise((r) => setImmediate(r))
    expect(done).toBe(false)
    release()
    await write
    expect(done).toBe(true)
    expect(store.atRest.has('device-list/1555')).toBe(true)
  })

  it('batches writes made while one is in flight into a single next write', async () => {
    const store = sealedSessionStore()
    const auth = await loadAlphaAuth(store, log, { fresh: false })
    const release = store.holdWrites()
    const first = auth.state.keys.set({ session: { a: new Uint8Array([1]) } })
    await new Promise((r) => setImmediate(r))
    const more = [auth.state.keys.set({ session: { b: new Uint8Array([2]) } }), auth.state.keys.set({ session: { c: new Uint8Array([3]) } }), auth.saveCreds()]
    release()
    await Promise.all([first, ...more])
    expect(store.writes.map((w) => [...w.keys()].sort())).toEqual([['session/a'], ['creds', 'session/b', 'session/c']])
  })

  it('deletes a key written as null, in memory and in the store', async () => {
    const store = sealedSessionStore()
    const auth = await loadAlphaAuth(store, log, { fresh: false })
    await auth.state.keys.set({ 'pre-key': { '7': Curve.generateKeyPair() } })
    await auth.state.keys.set({ 'pre-key': { '7': null } })
    expect(await auth.state.keys.get('pre-key', ['7'])).toEqual({})
    expect(store.atRest.has('pre-key/7')).toBe(false)
  })

  it('rejects a failed write, keeps the change and writes it again later on its own', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    const store = sealedSessionStore()
    const auth = await loadAlphaAuth(store, log, { fresh: false })
    store.failWrites(1)
    await expect(auth.state.keys.set({ tctoken: { 'x@lid': { token: Buffer.from('t') } } })).rejects.toThrow('store unavailable')
    expect(store.atRest.has('tctoken/x@lid')).toBe(false)
    expect(await auth.state.keys.get('tctoken', ['x@lid'])).toHaveProperty('x@lid')
    await vi.advanceTimersByTimeAsync(WRITE_RETRY_MS)
    expect(store.atRest.has('tctoken/x@lid')).toBe(true)
  })

  it('wipes memory and store, starts from fresh creds, and ignores writes through the old state', async () => {
    const store = sealedSessionStore()
    const auth = await loadAlphaAuth(store, log, { fresh: false })
    const before = auth.state
    await before.keys.set(everyKeyType())
    await auth.saveCreds()
    await auth.wipe()
    expect(store.atRest.size).toBe(0)
    expect(auth.state).not.toBe(before)
    expect(auth.state.creds.noiseKey.public).not.toEqual(before.creds.noiseKey.public)
    expect(await auth.state.keys.get('lid-mapping', ['15551234567'])).toEqual({})
    await before.keys.set({ session: { late: new Uint8Array([1]) } })
    await auth.flush()
    expect(store.atRest.size).toBe(0)
  })

  it('lets no write that was in flight land after a wipe', async () => {
    const store = sealedSessionStore()
    const auth = await loadAlphaAuth(store, log, { fresh: false })
    const release = store.holdWrites()
    const inFlight = auth.state.keys.set({ session: { old: new Uint8Array([1]) } })
    await new Promise((r) => setImmediate(r))
    const wiped = auth.wipe()
    release()
    await Promise.all([inFlight, wiped])
    expect(store.atRest.size).toBe(0)
    await auth.saveCreds()
    expect([...store.atRest.keys()]).toEqual([CREDS_KEY])
  })

  it('discards a stored session when asked to start fresh', async () => {
    const store = sealedSessionStore()
    const old = await loadAlphaAuth(store, log, { fresh: false })
    await old.saveCreds()
    const fresh = await loadAlphaAuth(store, log, { fresh: true })
    expect(store.clears).toBe(1)
    expect(fresh.state.creds.registrationId === old.state.creds.registrationId && fresh.state.creds.advSecretKey === old.state.creds.advSecretKey).toBe(false)
  })

  it('counts a session as linked only once the phone confirmed it (me and account)', async () => {
    const auth = await loadAlphaAuth(sealedSessionStore(), log, { fresh: false })
    expect(auth.isLinked()).toBe(false)
    auth.state.creds.me = { id: '15551234567@s.whatsapp.net', name: '~' }
    expect(auth.isLinked()).toBe(false)
    auth.state.creds.account = { details: Buffer.from('d') }
    expect(auth.isLinked()).toBe(true)
    expect(initAuthCreds().me).toBeUndefined()
  })
})
