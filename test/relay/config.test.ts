import { describe, expect, it } from 'vitest'
import { loadConfig, type RelayConfig } from '../../relay/config'
import { channelsOf, DRIVERS } from '../../relay/drivers'

const BASE = { GATEWAY_URL: 'https://gw.example.com', RELAY_TOKEN: `rly_${'a'.repeat(24)}`, RELAY_SESSION_KEY: 'k'.repeat(40) }

describe('relay configuration for beta', () => {
  it('reads the beta app credentials (API id and hash) when both are set', () => {
    const config = loadConfig({ ...BASE, RELAY_DRIVER: 'beta', RELAY_BETA_API_ID: '12345', RELAY_BETA_API_HASH: '0123456789abcdef0123456789abcdef' })
    expect(config.beta).toEqual({ apiId: 12345, apiHash: '0123456789abcdef0123456789abcdef' })
  })

  it('refuses a malformed API hash at start', () => {
    expect(() => loadConfig({ ...BASE, RELAY_BETA_API_ID: '12345', RELAY_BETA_API_HASH: 'not-a-hash' })).toThrow(/RELAY_BETA_API_HASH/)
  })

  it('runs both channels on the simulator', () => {
    expect(channelsOf('sim')).toEqual(['alpha_web', 'beta'])
    const sim = DRIVERS.sim!(loadConfig({ ...BASE, RELAY_DRIVER: 'sim' }))
    expect(typeof sim.alpha_web).toBe('function')
    expect(typeof sim.beta).toBe('function')
  })

  it('will not run the beta driver without credentials, and builds it with them', () => {
    const without: RelayConfig = loadConfig({ ...BASE, RELAY_DRIVER: 'beta' })
    expect(without.beta).toBeNull()
    expect(() => DRIVERS.beta!(without)).toThrow(/RELAY_BETA_API_ID/)
    const withCreds = loadConfig({ ...BASE, RELAY_DRIVER: 'beta', RELAY_BETA_API_ID: '1', RELAY_BETA_API_HASH: 'ffffffffffffffffffffffffffffffff' })
    expect(typeof DRIVERS.beta!(withCreds).beta).toBe('function')
  })
})
