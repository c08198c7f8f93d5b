/**
 * Issue #13: inbound media through the relay into R2. 200 images of 1 MiB are sent by the simulated network to one
 * linked number; the relay downloads each, spools it, uploads it to the local server (R2 on disk) and reports the
 * message. Measured: throughput, upstream → wait-returned latency p50/p99 (also as a multiple of the run's baseline
 * GET), the relay's resident memory before and at its peak during the burst, and that every image arrives exactly once
 * with its whole media.
 */
import { readFileSync } from 'node:fs'
import { eventually, issueRelayToken, simPost, spawnRelay, startSim } from '../e2e/relay-harness'
import { api, ms, percentile, type Bench, type BenchRow } from './bench-kit'

const IMAGES = 200
const IMAGE_BYTES = 1024 * 1024
const enc = encodeURIComponent

function rssMiB(pid: number): number {
  const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN)
  return kb / 1024
}

export const mediaBench: Bench = {
  name: 'media',
  async run({ server, baseline }) {
    const sim = await startSim()
    const { token } = await issueRelayToken(server)
    const relay = spawnRelay(server, token, sim)
    const rows: BenchRow[] = [{ metric: 'baseline GET /v1/usage round trip p50 / p99', value: `${ms(baseline.usageP50Ms)} / ${ms(baseline.usageP99Ms)}` }]
    try {
      await relay.linked
      const { key } = await server.newTenant()
      const phone = '+15580000001'
      await api(server, key, 'POST', '/channels/alpha-web/connections', { phone_number: phone })
      await eventually(() => sim.network.all().find((p) => p.phone === phone)?.link, 20_000, 'QR')
      await simPost(sim, `/alpha/${enc(phone)}/link`)
      await eventually(async () => (await api(server, key, 'GET', '/accounts')).json.accounts[0]?.status === 'connected', 20_000, 'connected')
      const pid = relay.proc.pid!
      const rssBefore = rssMiB(pid)
      let rssPeak = rssBefore
      const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, rssMiB(pid))), 50)

      const sentAt = new Map<string, number>()
      const arrived = new Map<string, number>()
      const counts = new Map<string, number>()
      let cursor = (await api(server, key, 'GET', '/messages/wait?timeout_s=0')).json.cursor as string
      let done = false
      const waiter = (async () => {
        while (!done) {
          const r = await api(server, key, 'GET', `/messages/wait?timeout_s=20&cursor=${cursor}`)
          const now = performance.now()
          cursor = r.json.cursor
          for (const m of r.json.messages as Array<{ text: string; media: { size: number } | null }>) {
            counts.set(m.text, (counts.get(m.text) ?? 0) + 1)
            if (!arrived.has(m.text) && m.media?.size === IMAGE_BYTES) arrived.set(m.text, now)
          }
          if (arrived.size >= IMAGES) done = true
        }
      })()
      await new Promise((r) => setTimeout(r, 100))
      const started = performance.now()
      for (let i = 0; i < IMAGES; i++) {
        const bytes = Buffer.alloc(IMAGE_BYTES, i % 251)
        sentAt.set(`img-${i}`, performance.now())
        // In-process: the network keeps the image on its media server; the relay downloads it like alpha's CDN.
        sim.network.inbound(phone, {
          from: '+447700900500',
          text: `img-${i}`,
          name: null,
          mediaUrl: null,
          lid: null,
          attachment: { contentType: 'image/jpeg', fileName: null, bytes, voiceNote: false },
        })
      }
      await Promise.race([
        waiter,
        new Promise((_, reject) => setTimeout(() => reject(new Error(`only ${arrived.size} of ${IMAGES} images arrived in 10 min`)), 600_000)),
      ])
      const seconds = (Math.max(...arrived.values()) - started) / 1000
      clearInterval(sampler)
      const latencies = [...arrived].map(([text, at]) => at - sentAt.get(text)!)
      const p50 = percentile(latencies, 50)
      const p99 = percentile(latencies, 99)
      await new Promise((r) => setTimeout(r, 1000))
      const listed: string[] = []
      let before: string | null = null
      do {
        const page: { json: { messages: Array<{ text: string }>; next_cursor: string | null } } = await api(
          server,
          key,
          'GET',
          `/messages?direction=inbound&limit=100${before ? `&before=${before}` : ''}`
        )
        listed.push(...page.json.messages.map((m) => m.text))
        before = page.json.next_cursor
      } while (before)
      const lost = IMAGES - new Set(listed).size
      const duplicated = listed.length - new Set(listed).size
      rows.push(
        {
          metric: `throughput, ${IMAGES} images of 1 MiB (upstream → stored in R2 → wait)`,
          value: `${(IMAGES / seconds).toFixed(1)} images/s (${((IMAGES * IMAGE_BYTES) / 1024 / 1024 / seconds).toFixed(1)} MiB/s)`,
        },
        {
          metric: 'latency p50 / p99 (upstream message → wait returned, burst)',
          value: `${ms(p50)} / ${ms(p99)} (${(p50 / baseline.usageP50Ms).toFixed(0)}x / ${(p99 / baseline.usageP50Ms).toFixed(0)}x baseline p50)`,
        },
        {
          metric: 'relay resident memory before / peak during the burst',
          value: `${rssBefore.toFixed(0)} MiB / ${rssPeak.toFixed(0)} MiB (${((rssPeak - rssBefore) / (IMAGE_BYTES / 1024 / 1024)).toFixed(1)}x one image)`,
        },
        { metric: 'images lost / duplicated', value: `${lost} / ${duplicated}`, target: '0 / 0', ok: lost === 0 && duplicated === 0 }
      )
      return {
        title: 'Inbound media through the relay into R2 (issue #13)',
        rows,
        notes: [
          'One relay process (sim driver) and `wrangler dev` with R2 on local disk. The simulated network runs in the benchmark process and sends all 200 images at once; each is downloaded by the relay from the network’s media server, spooled to a temporary file, streamed to `PUT /relay/media/…` (at most 4 uploads per session at once) and reported as an `inbound` frame after its upload.',
          'Latency counts from the upstream message to the wait answer that carries it, so in a burst it includes queueing behind earlier images.',
        ],
      }
    } finally {
      console.log(rows.map((r) => `  ${r.metric}: ${r.value}`).join('\n'))
      await relay.kill('SIGKILL')
      await sim.close()
    }
  },
}
