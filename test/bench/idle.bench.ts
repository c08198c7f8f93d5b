/**
 * Issue 14 §7, cost at rest: Durable Object wake-ups per idle hour, for an account after a burst and for the relay
 * hub holding an idle link. An hour cannot be waited out, so the figures come from test/worker/idle-hour.test.ts,
 * which runs the real objects in workerd on an injected clock and fires every alarm they set; this runs that file
 * and reads the figures it prints. No local server is needed.
 */
import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { repoRoot } from '../e2e/local-server'
import type { BenchRow, StandaloneBench } from './bench-kit'

const FIGURE = /idle-hour figure (\{.*\})/

export const idleBench: StandaloneBench = {
  name: 'idle',
  standalone: true,
  async run() {
    const vitest = spawnSync(
      join(repoRoot, 'node_modules', '.bin', 'vitest'),
      ['run', '--config', 'test/vitest.config.ts', 'test/worker/idle-hour.test.ts', '--reporter', 'verbose'],
      { cwd: repoRoot, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' } }
    )
    const output = `${vitest.stdout}\n${vitest.stderr}`
    const figures = [...output.matchAll(new RegExp(FIGURE, 'g'))].map((m) => JSON.parse(m[1]!) as { name: string; value: number })
    const passed = vitest.status === 0
    const rows: BenchRow[] = figures.map((f) => {
      const account = f.name.startsWith('account')
      return {
        metric: f.name,
        value: String(f.value),
        target: account ? '0' : 'one per lease (≤ hour / (lease − heartbeat))',
        ok: passed,
      }
    })
    if (!passed || figures.length === 0) rows.push({ metric: 'test/worker/idle-hour.test.ts', value: `failed (exit ${vitest.status})`, ok: false })
    return {
      title: 'Cost at rest: Durable Object wake-ups per idle hour',
      rows,
      notes: [
        'Simulated hour on an injected clock in workerd (test/worker/idle-hour.test.ts): every alarm the object sets within the hour is fired and counted.',
        'Account: a custom-channel account after a burst of 5 inbound messages (with a webhook subscription that answers 200, and without one). Nothing is pending afterwards, so no timer is left.',
        'Relay hub: one relay link holding one connected session, heartbeating every 3 s (the default), with the default 10 s lease. Heartbeats are answered by the WebSocket auto-response without waking the hub; only the lease check wakes it, once the link could first count as silent (lease after it was last heard).',
        'Not counted: a send still leaves its 30 s delivery sweep (`delivery` timer, worker/account/send.ts), one wake-up per send burst, after which the sweep finds nothing queued and stops.',
      ],
    }
  },
}
