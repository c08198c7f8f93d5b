/**
 * The credential store round trip: a driver's Baileys creds and signal keys (BufferJSON) are encrypted on the relay,
 * stored at the edge (a fake of it here; the e2e suite uses the real one), and restored by another relay process.
 */
import { BufferJSON, initAuthCreds } from '@whiskeysockets/baileys'
import { randomBytes } from 'node:crypto'
import { pino } from 'pino'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { connectUrlFor } from '../../../relay/config'
import { SessionCrypto } from '../../../relay/crypto'
import { RelayLink } from '../../../relay/link/socket'
import { EdgeSessionStore, LeaseLostError } from '../../../relay/sessions/edge-store'
import { startFakeEdge, type FakeEdge } from '../../fixtures/fake-edge'

const TOKEN = `rly_${'c'.repeat(40)}`
const KEY = randomBytes(32).toString('base64')
const ACCOUNT = 'ten_1/+15551234567'
let edge: FakeEdge
let links: RelayLink[] = []
let seq = 0

beforeEach(async () => {
  edge = await startFakeEdge({ token: TOKEN })
})
afterEach(async () => {
  for (const l of links) l.stop()
  links = []
  await edge.close()
})

function relayStore(key = KEY): EdgeSessionStore {
  const link = new RelayLink({
    url: connectUrlFor(edge.url),
    token: TOKEN,
    log: pino({ level: 'silent' }),
    hello: () => ({
      type: 'hello',
      protocol: 1,
      instance: `inst-${randomBytes(6).toString('hex')}`,
      version: 't',
      driver: 'alpha',
      channels: ['alpha_web'],
      sessions: [],
      draining: false,
    }),
    onFrame: () => undefined,
    onRefused: () => undefined,
  })
  links.push(link)
  link.start()
  return new EdgeSessionStore(link, 'ses_1', 1, ACCOUNT, new SessionCrypto(key), () => `w${++seq}`)
}

describe('EdgeSessionStore', () => {
  it('restores on another relay exactly what one relay wrote, Buffers included', async () => {
    const creds = initAuthCreds()
    const preKey = { private: randomBytes(32), public: randomBytes(32) }
    const first = relayStore()
    await first.write(
      new Map([
        ['creds', JSON.stringify(creds, BufferJSON.replacer)],
        ['pre-key-1', JSON.stringify(preKey, BufferJSON.replacer)],
        ['session-447700900123.0', JSON.stringify(randomBytes(64), BufferJSON.replacer)],
      ])
    )
    await first.write(new Map([['session-447700900123.0', null]]))

    const restored = await relayStore().loadAll()
    expect([...restored.keys()].sort()).toEqual(['creds', 'pre-key-1'])
    const revived = JSON.parse(restored.get('creds')!, BufferJSON.reviver) as typeof creds
    expect(Buffer.from(revived.noiseKey.private).equals(Buffer.from(creds.noiseKey.private))).toBe(true)
    expect(Buffer.from(revived.advSecretKey, 'base64').length).toBeGreaterThan(0)
    const key = JSON.parse(restored.get('pre-key-1')!, BufferJSON.reviver) as typeof preKey
    expect(Buffer.from(key.private).equals(preKey.private)).toBe(true)
  })

  it('leaves the edge only ciphertext under opaque names', async () => {
    const store = relayStore()
    await store.write(new Map([['session-447700900123.0', 'plain-secret-value']]))
    const stored = [...(edge.store.get('ses_1') ?? new Map<string, string>()).entries()]
    expect(stored).toHaveLength(1)
    const [name, value] = stored[0]!
    expect(name).not.toContain('447700900123')
    expect(value).not.toContain('plain-secret-value')
  })

  it('sends the writes of one tick as one frame', async () => {
    const store = relayStore()
    await Promise.all([store.write(new Map([['a', '1']])), store.write(new Map([['b', '2']])), store.write(new Map([['c', '3']]))])
    expect(edge.received.filter((f) => f.type === 'session_write')).toHaveLength(1)
  })

  it('wipes everything on clear, including writes made before it in the same tick', async () => {
    const store = relayStore()
    await store.write(new Map([['a', '1']]))
    await Promise.all([store.write(new Map([['b', '2']])), store.clear()])
    expect(await relayStore().loadAll()).toEqual(new Map())
  })

  it('fails a write the edge refuses as stale with LeaseLostError', async () => {
    const store = relayStore()
    edge.autoAck = false
    const write = store.write(new Map([['a', '1']]))
    const f = await edge.waitFor((x) => x.type === 'session_write')
    edge.send({ type: 'reject', id: 'id' in f ? f.id : '', sid: 'ses_1', reason: 'stale_fence' })
    await expect(write).rejects.toBeInstanceOf(LeaseLostError)
  })
})
