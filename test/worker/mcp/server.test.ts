// The MCP server's instructions promise only what is built: channels without a working send path are named as not available.
import { describe, expect, it } from 'vitest'
import { INSTRUCTIONS } from '../../../worker/mcp/server'

describe('MCP instructions', () => {
  it('name alpha and the custom channel as working, and beta, SMS and the page inbox as not available yet', () => {
    const [channels] = INSTRUCTIONS.split('. ')
    expect(channels).toContain('alpha and a custom channel today')
    expect(channels).toMatch(/beta, SMS and the page inbox are not available yet/)
  })
})
