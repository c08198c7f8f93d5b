/**
 * The published test vector (docs/examples/webhooks/test-vector.json) is what the gateway's own signer produces, and
 * every verification snippet of docs/webhooks.md whose toolchain is on this machine (Node and Python always; Go and
 * PHP where installed) accepts it and refuses each tampering. No server needed: webhooks.e2e.test.ts runs the same
 * snippets on live deliveries.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { signatureFor } from '../../worker/webhooks/signing'
import { repoRoot } from './local-server'
import { availableSnippets, snippetAccepts } from './signature-snippets'

type Vector = { secret: string; timestamp: number; body: string; headers: Record<string, string>; signature: string }
const vector = JSON.parse(readFileSync(join(repoRoot, 'docs/examples/webhooks/test-vector.json'), 'utf8')) as Vector
const snippets = availableSnippets()

describe('the webhook signature test vector', () => {
  it('is signed as the gateway signs a delivery', async () => {
    expect(await signatureFor(vector.secret, vector.timestamp, vector.body)).toBe(vector.signature)
    expect(vector.headers['x-webhook-signature']).toBe(vector.signature)
    expect(vector.headers['x-webhook-timestamp']).toBe(String(vector.timestamp))
    expect(JSON.parse(vector.body).delivery_id).toBe(vector.headers['x-webhook-delivery'])
  })

  it('is checked by the Node and Python snippets at least (Go and PHP where installed)', () => {
    expect(snippets.map((s) => s.name)).toEqual(expect.arrayContaining(['Node', 'Python']))
  })

  for (const snippet of snippets) {
    it(`${snippet.name} (${snippet.file}) accepts it and refuses every tampering`, async () => {
      const at = { secret: vector.secret, headers: vector.headers, body: vector.body, nowS: vector.timestamp }
      expect(await snippetAccepts(snippet, at), 'accepts the vector').toBe(true)
      expect(await snippetAccepts(snippet, { ...at, body: vector.body.replace('Ping', 'Pong') }), 'refuses a changed body').toBe(false)
      expect(await snippetAccepts(snippet, { ...at, secret: `${vector.secret}x` }), 'refuses another secret').toBe(false)
      const otherDelivery = `dlv_${'z'.repeat(44)}`
      expect(
        await snippetAccepts(snippet, { ...at, headers: { ...vector.headers, 'x-webhook-delivery': otherDelivery } }),
        'refuses another delivery header'
      ).toBe(false)
      expect(await snippetAccepts(snippet, { ...at, nowS: vector.timestamp + 301 }), 'refuses a stale timestamp').toBe(false)
      expect(
        await snippetAccepts(snippet, { ...at, headers: { ...vector.headers, 'x-webhook-signature': vector.signature.toUpperCase() } }),
        'refuses a mangled signature'
      ).toBe(false)
    }, 60_000)
  }
})
