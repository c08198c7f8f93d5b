/**
 * Black box against the real local server (wrangler dev): subscribe to message.received with a signing secret,
 * push an inbound custom-channel message, and the receiver gets exactly one signed POST. The README's verification
 * snippets (docs/examples/webhooks: Node and Python, Go and PHP where installed) are run on that real delivery: they accept it and refuse a
 * tampered body, a re-labelled delivery id (in the body or in the header) and a stale timestamp.
 */
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { repoRoot } from './local-server'
import { localSuite } from './local-suite'
import { availableSnippets, snippetAccepts } from './signature-snippets'

const local = localSuite()

const api = local.api

const snippets = availableSnippets()

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
      event_id: expect.stringMatching(/^evt_/),
      delivery_id: r.headers['x-webhook-delivery'],
    })
    const otherDelivery = `dlv_${'z'.repeat(44)}`

    const live = { secret, headers: r.headers, body: r.body }
    for (const snippet of snippets) {
      expect(await snippetAccepts(snippet, live), `${snippet.name} accepts the delivery`).toBe(true)
      expect(await snippetAccepts(snippet, { ...live, body: r.body.replace('Ping', 'Pong') }), `${snippet.name} refuses a tampered body`).toBe(false)
      expect(await snippetAccepts(snippet, { ...live, secret: 'whsec_wrong' }), `${snippet.name} refuses another secret`).toBe(false)
      const relabelled = { ...live, body: r.body.replace(r.headers['x-webhook-delivery']!, otherDelivery) }
      expect(relabelled.body).not.toBe(r.body)
      expect(await snippetAccepts(snippet, relabelled), `${snippet.name} refuses a body whose delivery id was changed`).toBe(false)
      const reheaded = { ...live, headers: { ...r.headers, 'x-webhook-delivery': otherDelivery } }
      expect(await snippetAccepts(snippet, reheaded), `${snippet.name} refuses the body under another delivery header`).toBe(false)
      const ts = Number(r.headers['x-webhook-timestamp'])
      expect(await snippetAccepts(snippet, { ...live, nowS: ts + 301 }), `${snippet.name} refuses a stale timestamp`).toBe(false)
    }

    const log = await api<{ deliveries: Array<{ delivery_id: string; status: string }> }>(key, 'GET', '/webhooks/agent/deliveries')
    expect(log.json.deliveries).toEqual([expect.objectContaining({ delivery_id: r.headers['x-webhook-delivery'], status: 'delivered' })])
  })

  it('npm run reseal walks every sealed value on the real server and reports them under the current key', async () => {
    const run = (env: Record<string, string>) =>
      new Promise<{ code: number | null; out: string }>((resolve, reject) => {
        const child = spawn(process.execPath, [join(repoRoot, 'scripts/reseal.mjs')], { env: { PATH: process.env.PATH ?? '', ...env } })
        let out = ''
        child.stdout.on('data', (d) => (out += String(d)))
        child.stderr.on('data', (d) => (out += String(d)))
        child.on('error', reject)
        child.on('close', (code) => resolve({ code, out }))
      })
    const ok = await run({ GATEWAY_URL: local.server.url, ADMIN_TOKEN: local.server.adminToken })
    expect(ok.out).toContain('every sealed value is under default')
    expect(ok.code).toBe(0)
    const refused = await run({ GATEWAY_URL: local.server.url, ADMIN_TOKEN: 'adm_wrong_wrong_wrong_wrong_wrong_wrong' })
    expect(refused.out).toContain('answered 401')
    expect(refused.code).toBe(1)
  })
})
