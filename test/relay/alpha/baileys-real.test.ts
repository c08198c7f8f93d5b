// The real Baileys 7 package under the driver: it loads, BufferJSON keeps real key material, and a real socket
// (pointed at a local WebSocket server instead of alpha) drives the connector's lifecycle.
import makeWASocket, { BufferJSON, DisconnectReason, initAuthCreds } from '@whiskeysockets/baileys'
import type { AddressInfo } from 'node:net'
import pino from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { WebSocketServer, type WebSocket } from 'ws'
import { makeAlphaDriver } from '../../../relay/alpha/client'
import { baileysConfig, makeAlphaSocket, sendOptions, type MakeSocket, type SendOptions } from '../../../relay/alpha/socket'
import { PAIR_DEVICE_EVENT, takeOverQrRotation } from '../../../relay/alpha/passkey-qr'
import { CLOSE_CODES } from '../../../relay/alpha/state'
import type { SessionState } from '../../../relay/connector'
import { sealedSessionStore } from '../../fixtures/session-store'

let wss: WebSocketServer
let wsUrl: string
const clients: WebSocket[] = []

beforeAll(async () => {
  wss = new WebSocketServer({ host: '127.0.0.1', port: 0 })
  wss.on('connection', (ws) => clients.push(ws))
  await new Promise<void>((r) => wss.on('listening', () => r()))
  wsUrl = `ws://127.0.0.1:${(wss.address() as AddressInfo).port}/ws/chat`
})
afterAll(async () => {
  for (const c of clients) c.terminate()
  await new Promise((r) => wss.close(r))
})

describe('Baileys 7 itself', () => {
  it('loads as ESM with makeWASocket and the disconnect codes the classifier relies on', () => {
    expect(typeof makeWASocket).toBe('function')
    expect(typeof makeAlphaSocket).toBe('function')
    expect(DisconnectReason.loggedOut).toBe(CLOSE_CODES.loggedOut)
    expect(DisconnectReason.forbidden).toBe(CLOSE_CODES.forbidden)
    expect(DisconnectReason.connectionReplaced).toBe(CLOSE_CODES.connectionReplaced)
    expect(DisconnectReason.restartRequired).toBe(CLOSE_CODES.restartRequired)
    expect(DisconnectReason.timedOut).toBe(CLOSE_CODES.timedOut)
  })

  it('round-trips real key material from initAuthCreds through BufferJSON, byte for byte', () => {
    const creds = initAuthCreds()
    const back = JSON.parse(JSON.stringify(creds, BufferJSON.replacer), BufferJSON.reviver) as typeof creds
    const pairs: Array<[Uint8Array, Uint8Array]> = [
      [creds.noiseKey.private, back.noiseKey.private],
      [creds.noiseKey.public, back.noiseKey.public],
      [creds.pairingEphemeralKeyPair.private, back.pairingEphemeralKeyPair.private],
      [creds.signedIdentityKey.private, back.signedIdentityKey.private],
      [creds.signedPreKey.keyPair.private, back.signedPreKey.keyPair.private],
      [creds.signedPreKey.signature, back.signedPreKey.signature],
    ]
    for (const [a, b] of pairs) {
      expect(Buffer.isBuffer(b)).toBe(true)
      expect(Buffer.from(b).equals(Buffer.from(a))).toBe(true)
    }
    expect(back.registrationId).toBe(creds.registrationId)
    expect(back.advSecretKey).toBe(creds.advSecretKey)
    // Plain JSON is not enough: it turns keys into objects of numbers that Baileys cannot use.
    const plain = JSON.parse(JSON.stringify(creds)) as { noiseKey: { private: unknown } }
    expect(Buffer.isBuffer(plain.noiseKey.private)).toBe(false)
  })
})

describe('the driver on a real Baileys socket', () => {
  it('reports connecting, reads a real close through ev.process and reconnects, and stops cleanly', async () => {
    const made: number[] = []
    const makeSocket: MakeSocket = (config) => {
      made.push(Date.now())
      return makeWASocket({ ...baileysConfig(config), waWebSocketUrl: wsUrl, connectTimeoutMs: 5_000 })
    }
    const states: SessionState[] = []
    const connector = makeAlphaDriver({ makeSocket, random: () => 0.5 })({
      accountId: '+15551234567',
      phone: '+15551234567',
      linkMethod: 'qr',
      forceNew: false,
      store: sealedSessionStore(),
      events: { state: (s) => states.push(s), inbound: () => undefined, receipt: () => undefined },
      log: pino({ level: 'silent' }),
    })
    await connector.start()
    await waitFor(() => clients.length === 1)
    expect(states).toEqual([{ state: 'connecting' }])

    // The "server" hangs up: Baileys ends the socket (428) and the driver opens a new one after the backoff.
    clients[0]!.terminate()
    await waitFor(() => clients.length === 2, 5_000)
    expect(made).toHaveLength(2)
    expect(made[1]! - made[0]!).toBeGreaterThanOrEqual(900)
    expect(states.every((s) => s.state === 'connecting')).toBe(true)

    await connector.stop()
    await new Promise((r) => setTimeout(r, 1_500))
    expect(made).toHaveLength(2)
  })
})

async function waitFor(check: () => boolean, timeoutMs = 3_000) {
  const deadline = Date.now() + timeoutMs
  while (!check()) {
    if (Date.now() > deadline) throw new Error('waitFor: condition not met in time')
    await new Promise((r) => setTimeout(r, 20))
  }
}

describe('link previews on a real Baileys socket', () => {
  it('takes getUrlInfo from the send options over its own, so sendOptions() turning it off reaches the real code', async () => {
    const auth = { creds: initAuthCreds(), keys: { get: async () => ({}), set: async () => undefined } }
    auth.creds.me = { id: '15551234567:12@s.whatsapp.net', name: 'Phone' }
    const sock = makeWASocket({
      ...baileysConfig({
        auth,
        logger: pino({ level: 'silent' }),
        getMessage: async () => undefined,
        msgRetryCounterCache: { get: () => undefined, set: () => undefined, del: () => undefined, flushAll: () => undefined },
      }),
      waWebSocketUrl: wsUrl,
      connectTimeoutMs: 2_000,
    })
    const seen: string[] = []
    const hook = async (url: string) => {
      seen.push(url)
      return undefined
    }
    // The send itself cannot finish (no alpha behind the socket); the message is built, previews included, first.
    const withHook: SendOptions = { ...sendOptions('3EB0TEST00000000000001'), getUrlInfo: hook }
    const attempt = sock.sendMessage('15550000777@s.whatsapp.net', { text: 'see https://shop.example.com/menu' }, withHook)
    await Promise.race([attempt.catch(() => undefined), waitFor(() => seen.length > 0).catch(() => undefined)])
    expect(seen).toEqual(['https://shop.example.com/menu'])
    const off = sock.sendMessage('15550000777@s.whatsapp.net', { text: 'see https://shop.example.com/menu' }, sendOptions('3EB0TEST00000000000002'))
    await Promise.race([off.catch(() => undefined), new Promise((r) => setTimeout(r, 200))])
    expect(seen).toHaveLength(1)
    sock.end(undefined)
  })
})

describe('passkey linking on a real Baileys socket', () => {
  it('replaces the one QR generator Baileys registered, and the socket has the query and sendNode the ceremony uses', async () => {
    const auth = { creds: initAuthCreds(), keys: { get: async () => ({}), set: async () => undefined } }
    const config = {
      auth,
      logger: pino({ level: 'silent' }),
      getMessage: async () => undefined,
      msgRetryCounterCache: { get: () => undefined, set: () => undefined, del: () => undefined, flushAll: () => undefined },
    }
    const real = makeWASocket({ ...baileysConfig(config), waWebSocketUrl: wsUrl, connectTimeoutMs: 2_000 })
    const baileys = real.ws.listeners(PAIR_DEVICE_EVENT)
    expect(baileys).toHaveLength(1)
    takeOverQrRotation(real, auth.creds, { firstMs: 60_000, nextMs: 20_000 }, () => undefined).stop()
    const now = real.ws.listeners(PAIR_DEVICE_EVENT)
    expect(now).toHaveLength(1)
    expect(now[0]).not.toBe(baileys[0])
    expect(typeof real.query).toBe('function')
    expect(typeof real.sendNode).toBe('function')
    real.end(undefined)
  })
})
