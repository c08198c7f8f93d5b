/**
 * worker/middleware/json-by-default.ts: a JSON body sent without a Content-Type, or as text/plain (what fetch() sets
 * for a string body), is read as JSON on every REST route; a body declared as something else is still 415, and a
 * body that is not JSON is 400.
 */
import { describe, expect, it } from 'vitest'
import { body, call, connectCustom, newTenant, type TestTenant } from '../helpers'

const SEND = { to: { external_id: 'pat' }, text: 'labelled or not' }
const bytes = (value: unknown) => new TextEncoder().encode(JSON.stringify(value))

/** POST /v1/messages with exactly the body and headers given (no Content-Type added). */
const post = (t: TestTenant, payload: BodyInit, headers: Record<string, string> = {}) =>
  call('/v1/messages', { method: 'POST', key: t.key, headers, body: payload })

describe('a JSON body without its Content-Type', () => {
  it('sends a message whether the body says nothing about its type or says text/plain', async () => {
    const t = await newTenant()
    await connectCustom(t)
    // A byte body gets no Content-Type from Request; a string body gets text/plain;charset=UTF-8.
    const unlabelled = await post(t, bytes(SEND))
    expect(unlabelled.status).toBe(202)
    const plain = await post(t, JSON.stringify(SEND))
    expect(plain.status).toBe(202)
    expect(await body(plain)).toMatchObject({ status: 'queued' })
    const plainUpper = await post(t, JSON.stringify(SEND), { 'Content-Type': 'Text/Plain; charset=utf-8' })
    expect(plainUpper.status).toBe(202)
  })

  it('creates a webhook from a text/plain body too (the status-shaped family)', async () => {
    const t = await newTenant()
    const res = await call('/v1/webhooks', {
      method: 'POST',
      key: t.key,
      body: JSON.stringify({ url: 'https://hooks.example.com/plain', subscribed_to: ['message.received'] }),
    })
    expect(res.status).toBeLessThan(300)
    expect(await body(res)).toMatchObject({ success: true })
  })

  it('leaves a body declared empty alone, so a required body names its missing field', async () => {
    const t = await newTenant()
    await connectCustom(t)
    const empty = await post(t, new Uint8Array(0), { 'Content-Length': '0' })
    expect(empty.status).toBe(400)
    expect(await body(empty)).toMatchObject({ error_code: 'invalid_recipient' })
  })

  it('answers 400 when such a body is not JSON, and 415 for a body declared as a form', async () => {
    const t = await newTenant()
    await connectCustom(t)
    const notJson = await post(t, 'to=pat&text=hi')
    expect(notJson.status).toBe(400)
    expect(await body(notJson)).toEqual({ error_code: 'invalid_request', error: 'the request body is not valid JSON' })
    const form = await post(t, JSON.stringify(SEND), { 'Content-Type': 'application/x-www-form-urlencoded' })
    expect(form.status).toBe(415)
    expect(await body(form)).toMatchObject({ error_code: 'invalid_request' })
  })
})
