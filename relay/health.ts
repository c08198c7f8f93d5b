/**
 * GET /healthz on the relay: the link's state and last frame times, sessions counted by state, and whether it is
 * draining, and the frames the edge refused. 200 while the link to the gateway is open, the relay takes work and the
 * edge is not refusing it over and over; 503 otherwise (for systemd, load balancers and humans). Sessions are also
 * counted by the problem they report, and a problem only the relay's operator can fix (an upstream refusing the
 * relay's client version: alpha 405) is named with what to do. Nothing in it names a contact or carries message
 * content. GET /metrics on the same port answers the Prometheus metrics (relay/metrics.ts).
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { LinkStats } from './link/socket'

export type HealthSource = {
  instance: string
  driver: string
  version: string
  startedAt: number
  link(): LinkStats
  sessions(): Record<string, number>
  /** Sessions by the problem they report (`client_outdated`, `logged_out`, …); optional for relays without sessions. */
  problems?(): Record<string, number>
  draining(): boolean
  simUrl: string | null
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString())

/** Problems the relay's operator must act on, with what to do; the status stays as the link says (sessions are down, not the relay). */
export const OPERATOR_PROBLEMS: Record<string, string> = {
  client_outdated: "alpha refuses this relay's web client version (error 405, repeated): upgrade @whiskeysockets/baileys and restart the relay.",
}

export function healthReport(h: HealthSource) {
  const link = h.link()
  const bySession = h.sessions()
  const byProblem = h.problems?.() ?? {}
  // A relay the edge keeps refusing is not doing its work, even with the link up (issue 14 §1).
  const ok = link.state === 'open' && !h.draining() && !link.rejects.alarming
  return {
    status: ok ? 'ok' : h.draining() ? 'draining' : 'degraded',
    instance: h.instance,
    driver: h.driver,
    version: h.version,
    uptime_s: Math.round((Date.now() - h.startedAt) / 1000),
    draining: h.draining(),
    link: {
      state: link.state,
      since: iso(link.since),
      last_frame_in_at: iso(link.lastFrameInAt),
      last_frame_out_at: iso(link.lastFrameOutAt),
      last_pong_at: iso(link.lastPongAt),
      unacked_frames: link.unacked,
      reconnects: link.reconnects,
    },
    /** Frames the edge refused: in total, within the last five minutes, and the last reason. */
    rejects: { total: link.rejects.total, recent: link.rejects.recent, last_reason: link.rejects.lastReason, last_at: iso(link.rejects.lastAt) },
    sessions: { total: Object.values(bySession).reduce((a, b) => a + b, 0), by_state: bySession, by_problem: byProblem },
    operator_action: Object.keys(byProblem)
      .filter((p) => p in OPERATOR_PROBLEMS)
      .map((problem) => ({ problem, sessions: byProblem[problem]!, action: OPERATOR_PROBLEMS[problem]! })),
    ...(h.simUrl ? { sim_control_url: h.simUrl } : {}),
  }
}

/** What GET /metrics answers: Prometheus text and its content type. */
export type MetricsSource = () => Promise<{ contentType: string; body: string }>

export async function startHealthServer(
  h: HealthSource,
  host: string,
  port: number,
  metrics: MetricsSource | null = null
): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0]
    if (req.method === 'GET' && path === '/metrics' && metrics) {
      metrics().then(
        (m) => res.writeHead(200, { 'content-type': m.contentType, 'cache-control': 'no-store' }).end(m.body),
        () => res.writeHead(500, { 'content-type': 'text/plain' }).end('metrics unavailable\n')
      )
      return
    }
    if (req.method !== 'GET' || path !== '/healthz') {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}')
      return
    }
    const report = healthReport(h)
    res.writeHead(report.status === 'ok' ? 200 : 503, { 'content-type': 'application/json', 'cache-control': 'no-store' })
    res.end(JSON.stringify(report))
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => resolve())
  })
  const { port: bound } = server.address() as AddressInfo
  return {
    url: `http://${host}:${bound}/healthz`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  }
}
