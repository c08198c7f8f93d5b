/**
 * The support tables of issue 25 say what the channels do: docs/api.md's row per channel and the table in each
 * docs/channels/<folder>.md match the channel's `actions` (which is what the routes answer 422 unsupported_on_channel
 * from), and the refusal names the channel.
 */
import { describe, expect, it } from 'vitest'
import api from '../../../docs/api.md?raw'
import { CHAT_ACTIONS } from '../../../schema/api/actions'
import type { Channel } from '../../../worker/channels/contract'
import { CHANNELS } from '../../../worker/channels/registry'
import { unsupportedOnChannel } from '../../../worker/messaging/actions'

const channelDocs = import.meta.glob<string>('../../../docs/channels/*.md', { query: '?raw', import: 'default', eager: true })
const indexModules = import.meta.glob<Record<string, unknown>>('../../../worker/channels/*/index.ts', { eager: true })

function folderOf(channel: Channel): string {
  const hit = Object.entries(indexModules).find(([, mod]) => Object.values(mod).includes(channel))
  return hit![0].split('/').at(-2)!
}

const cells = (channel: Channel) => CHAT_ACTIONS.map((a) => (channel.actions[a] ? 'yes' : 'no')).join(' | ')

describe('the chat action support tables', () => {
  for (const channel of CHANNELS) {
    it(`match what the ${channel.title} does, in docs/api.md and its own page`, () => {
      expect(api).toContain(`| ${channel.title} | ${cells(channel)} |`)
      const page = channelDocs[`../../../docs/channels/${folderOf(channel)}.md`]
      expect(page, `docs/channels/${folderOf(channel)}.md`).toBeDefined()
      expect(page).toContain('## Replies, reactions, typing and read marks')
      expect(page).toContain(`| ${cells(channel)} |`)
    })
  }

  it('name the channel in the 422 a channel without the action answers', () => {
    const err = unsupportedOnChannel('SMS', 'react')
    expect(err).toMatchObject({ status: 422, code: 'unsupported_on_channel' })
    expect(err.message).toContain('SMS')
  })
})
