/**
 * The relay's Prometheus metrics (GET /metrics on the health port, docs/relay.md "Metrics"), kept with prom-client in
 * a registry of this relay's own (two relays in one test process do not mix). The relay core reports events through
 * the `RelayMeter` it is handed (frames, acks, reconnects, sends, inbound messages, uploads, session states); what
 * is a level rather than an event (sessions by state, queued sends, unanswered frames, the link) is read from the
 * sources at scrape time. Labels are bounded (channel, state, problem, frame type, reason): never an account or a
 * contact.
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client'
import { CLOSE, type RelayChannel } from '../schema/frames'

/** What the relay core reports as it happens. Every method is cheap (a counter increment). */
export type RelayMeter = {
  frameIn(type: string): void
  frameOut(type: string): void
  /** The edge answered `frames` reliable frames (`ack`), or refused one (`reject`, with its reason). */
  answered(result: 'ack' | 'reject', frames: number, reason?: string): void
  /** The upstream was told a message or receipt is safe (the edge stored it): the relay's acknowledgement out. */
  upstreamAck(): void
  linkReconnect(reason: string): void
  sessionState(channel: RelayChannel, state: string, problem: string | null): void
  /** One hand-over to the upstream: sent, refused for good, or failed for now (the edge retries). */
  sendDone(channel: RelayChannel, outcome: 'sent' | 'refused' | 'failed', seconds: number): void
  /** From the upstream's event to the edge's ack of the inbound frame (media upload included). */
  inboundDone(channel: RelayChannel, seconds: number): void
  uploaded(channel: RelayChannel, kind: string, bytes: number): void
}

/** One running session as the scrape sees it. */
export type SessionSample = { channel: RelayChannel; state: string; problem: string | null; heldSends: number }

export type MetricSources = {
  sessions(): SessionSample[]
  /** Reliable frames waiting for the edge's answer (the outbox). */
  unansweredFrames(): number
  linkState(): string
  draining(): boolean
}

/** Seconds: an upstream send is usually well under a second; a flood wait or a slow upload can take minutes. */
const SEND_BUCKETS_S = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60]
const INBOUND_BUCKETS_S = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 120]
const LINK_STATES = ['connecting', 'open', 'down', 'stopped'] as const

export class RelayMetrics implements RelayMeter {
  readonly registry = new Registry()
  private sources: MetricSources | null = null
  private readonly frames: Counter<'direction' | 'type'>
  private readonly acks: Counter<'direction'>
  private readonly rejects: Counter<'reason'>
  private readonly reconnects: Counter<'reason'>
  private readonly stateChanges: Counter<'channel' | 'state' | 'problem'>
  private readonly sendSeconds: Histogram<'channel' | 'outcome'>
  private readonly inboundSeconds: Histogram<'channel'>
  private readonly uploadBytes: Counter<'channel' | 'kind'>
  private readonly uploads: Counter<'channel' | 'kind'>

  constructor(labels: { instance: string; driver: string; version: string }) {
    const registers = [this.registry]
    collectDefaultMetrics({ register: this.registry })
    new Gauge({
      name: 'relay_info',
      help: 'This relay: instance id, drivers and version (always 1).',
      labelNames: ['instance', 'driver', 'version'],
      registers,
    }).set(labels, 1)
    const sources = () => this.sources
    new Gauge({
      name: 'relay_sessions',
      help: 'Sessions this relay runs, by channel and state.',
      labelNames: ['channel', 'state'],
      registers,
      collect() {
        this.reset()
        for (const s of sources()?.sessions() ?? []) this.inc({ channel: s.channel, state: s.state })
      },
    })
    new Gauge({
      name: 'relay_session_problems',
      help: 'Sessions reporting a problem (unresponsive, logged_out, blocked_by_alpha, flood_wait, …), by channel and problem.',
      labelNames: ['channel', 'problem'],
      registers,
      collect() {
        this.reset()
        for (const s of sources()?.sessions() ?? []) if (s.problem) this.inc({ channel: s.channel, problem: s.problem })
      },
    })
    new Gauge({
      name: 'relay_queued_sends',
      help: 'Sends held by sessions until they can send (connecting, reconnecting, logging in), by channel.',
      labelNames: ['channel'],
      registers,
      collect() {
        this.reset()
        for (const s of sources()?.sessions() ?? []) if (s.heldSends > 0) this.inc({ channel: s.channel }, s.heldSends)
      },
    })
    new Gauge({
      name: 'relay_unanswered_frames',
      help: 'Reliable frames sent or waiting to be sent that the edge has not answered yet (the outbox).',
      registers,
      collect() {
        this.set(sources()?.unansweredFrames() ?? 0)
      },
    })
    new Gauge({
      name: 'relay_link_state',
      help: 'The link to the gateway: 1 for its current state, 0 for the others.',
      labelNames: ['state'],
      registers,
      collect() {
        const now = sources()?.linkState()
        for (const state of LINK_STATES) this.set({ state }, state === now ? 1 : 0)
      },
    })
    new Gauge({
      name: 'relay_draining',
      help: '1 while the relay drains (SIGTERM): it takes no new work.',
      registers,
      collect() {
        this.set(sources()?.draining() ? 1 : 0)
      },
    })
    const counter = <L extends string>(name: string, help: string, labelNames: L[]) => new Counter<L>({ name, help, labelNames, registers })
    const histogram = <L extends string>(name: string, help: string, labelNames: L[], buckets: number[]) =>
      new Histogram<L>({ name, help, labelNames, buckets, registers })
    this.frames = counter('relay_frames_total', 'Frames over the link, by direction (in, out) and type.', ['direction', 'type'])
    this.acks = counter(
      'relay_acks_total',
      'Acknowledgements: in, reliable frames the edge acked; out, messages and receipts the relay acknowledged upstream once the edge stored them.',
      ['direction']
    )
    this.rejects = counter('relay_rejected_frames_total', 'Frames the edge refused, by reason.', ['reason'])
    this.reconnects = counter('relay_link_reconnects_total', 'Times the link to the gateway went down and is being re-established, by reason.', ['reason'])
    this.stateChanges = counter(
      'relay_session_state_changes_total',
      'Session state changes reported by the drivers (reconnects show as connecting, failures with their problem).',
      ['channel', 'state', 'problem']
    )
    this.sendSeconds = histogram(
      'relay_send_seconds',
      'How long the upstream took to take a message, by channel and outcome.',
      ['channel', 'outcome'],
      SEND_BUCKETS_S
    )
    this.inboundSeconds = histogram(
      'relay_inbound_seconds',
      'From an upstream message to the edge storing it (media upload included), by channel.',
      ['channel'],
      INBOUND_BUCKETS_S
    )
    this.uploadBytes = counter('relay_media_upload_bytes_total', 'Bytes of inbound media stored in the gateway, by channel and kind.', ['channel', 'kind'])
    this.uploads = counter('relay_media_uploads_total', 'Inbound media items stored, by channel and kind.', ['channel', 'kind'])
    for (const direction of ['in', 'out']) this.acks.inc({ direction }, 0)
  }

  /** Where the scrape-time levels come from (the session manager and the link, created after the meter). */
  watch(sources: MetricSources): void {
    this.sources = sources
  }

  /** The exposition text and its content type. */
  async render(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() }
  }

  frameIn(type: string): void {
    this.frames.inc({ direction: 'in', type })
  }

  frameOut(type: string): void {
    this.frames.inc({ direction: 'out', type })
  }

  answered(result: 'ack' | 'reject', frames: number, reason?: string): void {
    if (result === 'ack') this.acks.inc({ direction: 'in' }, frames)
    else this.rejects.inc({ reason: reason ?? 'unknown' })
  }

  upstreamAck(): void {
    this.acks.inc({ direction: 'out' })
  }

  linkReconnect(reason: string): void {
    this.reconnects.inc({ reason })
  }

  sessionState(channel: RelayChannel, state: string, problem: string | null): void {
    this.stateChanges.inc({ channel, state, problem: problem ?? '' })
  }

  sendDone(channel: RelayChannel, outcome: 'sent' | 'refused' | 'failed', seconds: number): void {
    this.sendSeconds.observe({ channel, outcome }, seconds)
  }

  inboundDone(channel: RelayChannel, seconds: number): void {
    this.inboundSeconds.observe({ channel }, seconds)
  }

  uploaded(channel: RelayChannel, kind: string, bytes: number): void {
    this.uploadBytes.inc({ channel, kind }, bytes)
    this.uploads.inc({ channel, kind })
  }
}

/** Why the link went down, as a bounded label: the close code's meaning, or how the connect failed. */
export function reconnectReason(code: number, opened: boolean, httpStatus: number | null, heartbeatTimeout: boolean): string {
  if (heartbeatTimeout) return 'heartbeat_timeout'
  if (httpStatus !== null) return `http_${httpStatus}`
  if (!opened) return 'connect_failed'
  if (code === CLOSE.HEARTBEAT_TIMEOUT) return 'edge_heartbeat_timeout'
  if (code === CLOSE.PROTOCOL) return 'protocol'
  if (code === 1000 || code === 1001) return 'closed_by_edge'
  if (code === 1012) return 'edge_restart'
  return 'connection_lost'
}
