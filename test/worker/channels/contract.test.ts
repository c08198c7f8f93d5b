/// <reference types="vite/client" />
// Every channel folder holds the files of its kind (channels/contract.ts): a direct channel talks to its provider
// itself, a relay-run one is built on channels/relay-run/ and has its driver in relay/<name>/; and the "How to add a
// channel" section of docs/ARCHITECTURE.md names every one of those files.
import { describe, expect, it } from 'vitest'
import architecture from '../../../docs/ARCHITECTURE.md?raw'
import { CHANNEL_FILES, RELAY_DRIVER_FILES, type Channel } from '../../../worker/channels/contract'
import { CHANNELS } from '../../../worker/channels/registry'

/** `../../../worker/channels/alpha/routes.ts` → ['alpha', 'routes.ts'] */
const split = (path: string) => path.split('/').slice(-2) as [string, string]

const workerFiles = Object.keys(import.meta.glob('../../../worker/channels/*/*.ts')).map(split)
const relayFiles = Object.keys(import.meta.glob('../../../relay/*/*.ts')).map(split)
const indexModules = import.meta.glob<Record<string, unknown>>('../../../worker/channels/*/index.ts', { eager: true })

/** The folder of each registered channel: the one whose index.ts exports it. */
function folderOf(channel: Channel): string | undefined {
  const hit = Object.entries(indexModules).find(([, mod]) => Object.values(mod).includes(channel))
  return hit && split(hit[0])[0]
}

const filesIn = (files: [string, string][], folder: string) => files.filter(([f]) => f === folder).map(([, name]) => name)

describe('channel folders', () => {
  it('give every registered channel a folder of its own, and hold nothing else but the shared relay-run module', () => {
    const folders = CHANNELS.map(folderOf)
    expect(folders.every((f) => f !== undefined)).toBe(true)
    expect(new Set(folders).size).toBe(CHANNELS.length)
    const all = new Set(workerFiles.map(([f]) => f))
    expect([...all].filter((f) => !folders.includes(f)).sort()).toEqual(['relay-run'])
  })

  for (const channel of CHANNELS) {
    it(`hold every file a ${channel.transport} channel needs, for ${channel.title}`, () => {
      const folder = folderOf(channel)!
      const present = filesIn(workerFiles, folder)
      for (const file of CHANNEL_FILES[channel.transport]) expect(present, `worker/channels/${folder}/${file}`).toContain(file)
      if (channel.transport === 'relay') {
        const driver = filesIn(relayFiles, folder)
        for (const file of RELAY_DRIVER_FILES) expect(driver, `relay/${folder}/${file}`).toContain(file)
      }
    })
  }
})

describe('docs/ARCHITECTURE.md, "How to add a channel"', () => {
  const section = architecture.split('## How to add a channel')[1]?.split('\n## ')[0] ?? ''

  it('names every file of both kinds of channel folder and of a relay driver', () => {
    expect(section.length).toBeGreaterThan(0)
    for (const file of new Set([...CHANNEL_FILES.direct, ...CHANNEL_FILES.relay, ...RELAY_DRIVER_FILES])) expect(section, file).toContain(`\`${file}\``)
  })
})
