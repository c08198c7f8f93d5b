/** What one relay token may hold in the hub (issue 14 §2): live links, sessions named in a hello. */
import { describe, expect, it } from 'vitest'
import { FRAME_PROTOCOL_VERSION, type FrameOf } from '../../../schema/frames'
import { HELLO_SESSIONS_MAX, RELAY_LINKS_PER_TOKEN } from '../../../worker/relay/budgets'
import { closeRelaysAfterEach, FakeRelay, issueRelay, relayConnect } from '../relay-helpers'

const relays = closeRelaysAfterEach()

describe('relay token budgets', () => {
  it(`accepts ${RELAY_LINKS_PER_TOKEN} live links per token and answers the next with 429`, async () => {
    const { token } = await issueRelay()
    for (let i = 0; i < RELAY_LINKS_PER_TOKEN; i++) relays.push(await FakeRelay.open(token))
    const refused = await relayConnect(token)
    expect(refused.status).toBe(429)
    expect(refused.headers.get('Retry-After')).toBe('10')
    // Another token is not affected.
    relays.push(await FakeRelay.open((await issueRelay()).token))
  })

  it('closes a link whose hello lists more sessions than the budget, before any work on them', async () => {
    const { token } = await issueRelay()
    const hello = (n: number, r: FakeRelay): FrameOf<'hello'> => ({
      type: 'hello',
      protocol: FRAME_PROTOCOL_VERSION,
      instance: r.instance,
      version: 'test',
      driver: 'sim',
      channels: ['alpha_web'],
      sessions: Array.from({ length: n }, (_, i) => ({ sid: `ses_unknown_${i}`, fence: 1 })),
      draining: false,
    })
    const over = await FakeRelay.open(token, { hello: false })
    relays.push(over)
    over.send(hello(HELLO_SESSIONS_MAX + 1, over))
    expect(await over.waitClosed()).toMatchObject({ code: 4002 })

    expect(over.frames.filter((f) => f.type === 'revoke')).toEqual([])
  })
})
