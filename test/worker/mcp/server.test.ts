// The MCP server's instructions promise only what is built: a channel without a working send path is named as not available.
import { describe, expect, it } from 'vitest'
import { INSTRUCTIONS } from '../../../worker/mcp/server'

describe('MCP instructions', () => {
  it('name the built channels as working, and beta as not available yet', () => {
    const [channels] = INSTRUCTIONS.split('. ')
    expect(channels).toContain('alpha, SMS, a page inbox and a custom channel today')
    expect(channels).toMatch(/beta is not available yet/)
  })
})
