/**
 * docs/simulator.md's blocks (```sh runnable-sim) run as a reader runs them after `npm start -- --sim`: against the
 * real local server, the simulated network and a relay in sim mode, with the variables npm start prints (GW, SIM,
 * SIM_KEY, SIM_BETA_KEY). Each must exit 0 without an error body, and what they claim must hold: the alpha number
 * and the beta account are connected, each got its contact's message, and each reply reached the contact.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ERROR_BODY, runBlock, runnableBlocks } from './docs-markdown'
import { repoRoot } from './local-server'
import { eventually, issueRelayToken, simGet, type Json } from './relay-harness'
import { relaySuite } from './relay-suite'

const suite = relaySuite({ keepRelays: true })
const page = 'docs/simulator.md'
const blocks = runnableBlocks(page, readFileSync(join(repoRoot, page), 'utf8'), 'runnable-sim')

describe('docs/simulator.md', () => {
  it('has the alpha and the beta script as runnable blocks', () => {
    expect(blocks.map((b) => b.code.match(/\$SIM\/(alpha|beta)\//)?.[1])).toEqual(['alpha', 'beta'])
  })

  it('runs both scripts, in page order, with the keys npm start -- --sim prints', async () => {
    const { token } = await issueRelayToken(suite.server)
    suite.relay(token)
    const [alpha, beta] = [await suite.server.newTenant(), await suite.server.newTenant()]
    const vars = { GW: `${suite.server.url}/v1`, SIM: `${suite.sim.url}/sim`, SIM_KEY: alpha.key, SIM_BETA_KEY: beta.key }
    const failures: string[] = []
    for (const block of blocks) {
      const r = await runBlock(block.code, vars, [['http://127.0.0.1:8787', suite.server.url]], 120_000)
      const out = `${r.stdout}${r.stderr}`
      if (r.status !== 0) failures.push(`${block.file}:${block.line} exited ${r.status ?? r.signal}\n${out}`)
      else if (ERROR_BODY.test(r.stdout)) failures.push(`${block.file}:${block.line} printed an error body\n${out}`)
    }
    expect(failures).toEqual([])

    const accounts = async (key: string) => (await suite.api(key, 'GET', '/accounts')).json.accounts as Json[]
    expect((await accounts(alpha.key)).map((a) => [a.id, a.status])).toEqual([['+15551234567', 'connected']])
    expect((await accounts(beta.key)).map((a) => [a.channel, a.status])).toEqual([['beta', 'connected']])
    await eventually(
      async () => (await simGet<{ messages: Json[] }>(suite.sim, '/alpha/%2B15551234567/outbox')).messages.some((m) => m.text === 'Hello from the gateway'),
      20_000,
      'alpha reply delivered'
    )
    await eventually(
      async () => (await simGet<{ messages: Json[] }>(suite.sim, '/beta/%2B15557654321/outbox')).messages.some((m) => m.text === 'Hello from beta'),
      20_000,
      'beta reply delivered'
    )
  }, 300_000)
})
