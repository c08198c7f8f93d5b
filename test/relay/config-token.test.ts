// The relay's environment check: a relay token passes, the relay's id (the usual wrong paste) is named as such.
import { describe, expect, it } from 'vitest'
import { loadConfig } from '../../relay/config'

const base = { GATEWAY_URL: 'https://gateway.example.com', RELAY_SESSION_KEY: 'k'.repeat(44) }

describe('relay config', () => {
  it('accepts the token from POST /admin/relays (rly_ + 40)', () => {
    const config = loadConfig({ ...base, RELAY_TOKEN: `rly_${'A1b'.repeat(13)}x` })
    expect(config.token).toHaveLength(44)
    expect(config.connectUrl).toBe('wss://gateway.example.com/relay/connect')
  })

  it('refuses a pasted relay id (rly_ + 20) and says it is the id', () => {
    expect(() => loadConfig({ ...base, RELAY_TOKEN: `rly_${'Z'.repeat(20)}` })).toThrow(/relay id .*"token" field/)
  })

  it('refuses what is too short to be a token', () => {
    expect(() => loadConfig({ ...base, RELAY_TOKEN: `rly_${'Z'.repeat(12)}` })).toThrow(/rly_ \+ 40 characters/)
  })
})
