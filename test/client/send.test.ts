/** gw.messages.send: the body as JSON, and an idempotency key, when given, as the Idempotency-Key header. */
import { describe, expect, it } from 'vitest'
import { createGateway } from '../../client/src/index'

function capturing() {
  const seen: Request[] = []
  const fetch = async (req: Request) => {
    seen.push(req)
    return new Response(JSON.stringify({ message_id: 'msg_1', status: 'queued' }), { status: 202, headers: { 'content-type': 'application/json' } })
  }
  return { seen, gw: createGateway({ baseUrl: 'http://gw.test', apiKey: 'svc_live_x', fetch }) }
}

describe('gw.messages.send', () => {
  it('sends the idempotency key as the Idempotency-Key header', async () => {
    const { seen, gw } = capturing()
    await gw.messages.send({ to: { contact_id: 'con_1' }, text: 'hi' }, { idempotencyKey: 'reply-1' })
    expect(seen[0]!.headers.get('Idempotency-Key')).toBe('reply-1')
    expect(await seen[0]!.json()).toEqual({ to: { contact_id: 'con_1' }, text: 'hi' })
  })

  it('sends no Idempotency-Key header without one', async () => {
    const { seen, gw } = capturing()
    await gw.messages.send({ to: { contact_id: 'con_1' }, text: 'hi' })
    expect(seen[0]!.headers.has('Idempotency-Key')).toBe(false)
  })
})
