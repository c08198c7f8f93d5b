// The MCP server's instructions promise only what is built: every channel they name has a working send path.
import { describe, expect, it } from 'vitest'
import { INSTRUCTIONS } from '../../../worker/mcp/server'

describe('MCP instructions', () => {
  it('name the built channels and promise nothing as coming later', () => {
    const [channels] = INSTRUCTIONS.split('. ')
    expect(channels).toContain('(alpha, beta, SMS, a page inbox, a custom channel)')
    expect(INSTRUCTIONS).not.toMatch(/not (available|built) yet/i)
  })
})
