/**
 * Black box against the real local server (wrangler dev): subscribe to message.received with a signing secret,
 * push an inbound custom-channel message, and the receiver gets exactly one signed POST. The README's verification
 * snippets (docs/examples/webhooks, Node and Python) are run on that real delivery: they accept it and refuse a
 * tampered body and a stale timestamp.
 */
import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import type { Received } from '../fixtures/receiver-types'
import { repoRoot } from './local-server'
import { localSuite } from './local-suite'

const local = localSuite()

const api = local.api

/** Runs one of the published snippets on a delivery; true when it accepts the signature. */
function snippetAccepts(command: string[], secret: string, r: Pick<Received, 'headers' | 'body'>, nowS?: number): boolean {
  const [bin, ...args] = command
  const run = spawnSync(bin!, args, { input: JSON.stringify({ secret, headers: r.headers, body: r.body, now_s: nowS }), encoding: 'utf8' })
  if (run.status !== 0 && run.status !== 1) throw new Error(`${command.join(' ')} crashed (${run.status}): ${run.stderr}`)
  return run.status === 0
}

const NODE = [process.execPath, join(repoRoot, 'docs/examples/webhooks/verify-signature.mjs')]
const PYTHON = ['python3', join(repoRoot, 'docs/examples/webhooks/verify_signature.py')]

describe('webhooks end to end on the local server', () => {
  it('delivers one signed message.received POST that the published snippets verify', async () => {
    const { key } = await local.server.newTenant()
    expect((await api(key, 'PUT', '/channels/custom', { webhook_url: `${local.receiver.url}/r/bridge` })).status).toBe(200)
    const created = await api<{ webhook: { name: string }; signing_secret: string }>(key, 'POST', '/webhooks', {
      url: `${local.receiver.url}/r/hook`,
      subscribed_to: ['message.received'],
      name: 'agent',
      generate_signing_secret: true,
    })
    expect(created.status).toBe(201)
    const secret = created.json.signing_secret
    await fetch(`${local.receiver.url}/__behaviour/hook`, { method: 'PUT', body: JSON.stringify({ secret }) })

    const pushed = await api<{ message_id: string }>(key, 'POST', '/channels/custom/inbound', {
      customData: { body: 'Ping from the bridge — ünïcode ✓', fromId: 'user-9' },
    })
    expect(pushed.status).toBe(200)
    const deadline = Date.now() + 10_000
    while (local.receiver.log('hook').length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
    // Give a duplicate every chance to show up before counting.
    await new Promise((r) => setTimeout(r, 500))
    const got = local.receiver.log('hook')
    expect(got).toHaveLength(1)
    const r = got[0]!
    expect(r.headers['x-webhook-event']).toBe('message.received')
    expect(r.verified).toBe(true)
    expect(r.json).toMatchObject({
      event: 'message.received',
      account_id: 'custom',
      channel: 'custom',
      message: { id: pushed.json.message_id, text: 'Ping from the bridge — ünïcode ✓' },
    })

    for (const snippet of [NODE, PYTHON]) {
      expect(snippetAccepts(snippet, secret, r), `${snippet[1]} accepts the delivery`).toBe(true)
      expect(snippetAccepts(snippet, secret, { ...r, body: r.body.replace('Ping', 'Pong') }), `${snippet[1]} refuses a tampered body`).toBe(false)
      expect(snippetAccepts(snippet, 'whsec_wrong', r), `${snippet[1]} refuses another secret`).toBe(false)
      const ts = Number(r.headers['x-webhook-timestamp'])
      expect(snippetAccepts(snippet, secret, r, ts + 301), `${snippet[1]} refuses a stale timestamp`).toBe(false)
    }

    const log = await api<{ deliveries: Array<{ delivery_id: string; status: string }> }>(key, 'GET', '/webhooks/agent/deliveries')
    expect(log.json.deliveries).toEqual([expect.objectContaining({ delivery_id: r.headers['x-webhook-delivery'], status: 'delivered' })])
  })
})
