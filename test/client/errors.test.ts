/** The client's error classes: each of the spec's two body shapes (part 7) becomes its class, anything else the base. */
import { describe, expect, it } from 'vitest'
import { errorFromResponse, GatewayError, MessagingError, StatusError } from '../../client/src/index'

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } })

describe('errorFromResponse', () => {
  it('makes a messaging body a MessagingError with its code and retry_after_s', async () => {
    const err = await errorFromResponse(json(429, { error_code: 'daily_send_cap', error: '50 sends today', retry_after_s: 3600 }))
    expect(err).toBeInstanceOf(MessagingError)
    expect(err).toMatchObject({ code: 'daily_send_cap', status: 429, retryAfterS: 3600, message: '50 sends today' })
  })

  it('makes a status body a StatusError with the HTTP status as its code, Retry-After read from the header', async () => {
    const err = await errorFromResponse(json(429, { success: false, error: 'slow down', error_code: 429 }, { 'retry-after': '7' }))
    expect(err).toBeInstanceOf(StatusError)
    expect(err).toMatchObject({ code: 429, status: 429, retryAfterS: 7 })
  })

  it('keeps any other answer as a GatewayError with its status and text', async () => {
    const err = await errorFromResponse(new Response('Internal Server Error', { status: 500 }))
    expect(err).toBeInstanceOf(GatewayError)
    expect(err).not.toBeInstanceOf(MessagingError)
    expect(err).toMatchObject({ status: 500, body: 'Internal Server Error', retryAfterS: null, message: 'HTTP 500' })
  })
})
