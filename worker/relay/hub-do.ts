/**
 * RelayHubDO: the one Durable Object where relay links end (hibernatable WebSockets) and the coordinator that
 * assigns each alpha/beta session to one live relay under a fenced lease. A thin class of lifecycle hooks and RPC
 * methods; the rules live in placement.ts, leases.ts, inbox.ts (with hello.ts, session-inbox.ts, frame-batches.ts
 * and session-frame.ts) and control.ts, its storage in hub-store.ts. Frames are routed to the AccountDOs by RPC.
 * A singleton (`relayHub(env)`): docs/ARCHITECTURE.md says why.
 */
import { DurableObject } from 'cloudflare:workers'
import {
  PING_TEXT,
  PONG_TEXT,
  type ActionOutcome,
  type ChatAction,
  type LoginOutcome,
  type LoginStep,
  type OutboundMessage,
  type SessionState,
} from '../../schema/frames'
import { relayConfig } from '../config'
import { directory } from '../db/shards'
import { tenantsWithOwnRelays } from '../db/relays'
import {
  chatAction,
  cutRelay,
  dispatchSend,
  loginStep,
  logoutSession,
  openSession,
  probeSession,
  relayLinks,
  type OpenOutcome,
  type RelayLinkView,
} from './control'
import type { HubContext } from './hub-context'
import { HubStore, type SessionSpec } from './hub-store'
import { onRelayMessage } from './inbox'
import { leaseTick, linkGone, nextCheckAt } from './leases'
import { inScope } from './placement'
import { RELAY_LINKS_PER_TOKEN } from './budgets'
import { attachmentOf, lastSeen, openLinks, relayTag, setAttachment } from './links'
import { RELAY_ID_HEADER, RELAY_TENANT_HEADER } from './upgrade.shared'

export class RelayHubDO extends DurableObject<Env> {
  private readonly c: HubContext

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env)
    ctx.setWebSocketAutoResponse(new WebSocketRequestResponsePair(PING_TEXT, PONG_TEXT))
    this.c = {
      env,
      ctx,
      db: directory(env),
      store: new HubStore(ctx.storage),
      config: relayConfig(env),
      chains: new Map(),
      inbound: new Map(),
      receipts: new Map(),
      probes: new Map(),
      logins: new Map(),
      actions: new Map(),
      framesSeen: new Map(),
      rearm: () => this.rearm(),
      log: (event, fields) => console.log(JSON.stringify({ at: new Date().toISOString(), component: 'relay-hub', event, ...fields })),
    }
  }

  /** The WebSocket upgrade of a relay whose token the Worker route already checked. */
  override async fetch(request: Request): Promise<Response> {
    const relayId = request.headers.get(RELAY_ID_HEADER)
    if (request.headers.get('upgrade')?.toLowerCase() !== 'websocket' || !relayId) return new Response('expected a relay WebSocket upgrade', { status: 400 })
    // Budget per relay token (issue 14 §2): a leaked or looping token cannot pile up sockets in the one hub.
    if (openLinks(this.ctx, relayTag(relayId)).length >= RELAY_LINKS_PER_TOKEN) {
      return Response.json(
        { success: false, error: `this relay token already has ${RELAY_LINKS_PER_TOKEN} live links`, error_code: 429 },
        { status: 429, headers: { 'Retry-After': '10' } }
      )
    }
    const pair = new WebSocketPair()
    const [client, server] = [pair[0], pair[1]]
    this.ctx.acceptWebSocket(server, [relayTag(relayId)])
    setAttachment(server, {
      relayId,
      tenantId: request.headers.get(RELAY_TENANT_HEADER) || null,
      connectedAt: Date.now(),
      instance: null,
      version: null,
      driver: null,
      channels: [],
      draining: false,
    })
    await this.rearm()
    return new Response(null, { status: 101, webSocket: client })
  }

  override async webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
    const att = attachmentOf(ws)
    if (att) await onRelayMessage(this.c, { ws, att }, message)
  }

  override async webSocketClose(ws: WebSocket, code: number, reason: string): Promise<void> {
    this.onRelayClose(ws, `closed ${code} ${reason}`)
    try {
      ws.close(code === 1005 || code === 1006 ? 1000 : code, 'closing')
    } catch {
      // already closed
    }
    await this.rearm()
  }

  override async webSocketError(ws: WebSocket, error: unknown): Promise<void> {
    this.onRelayClose(ws, `error ${String(error)}`)
    await this.rearm()
  }

  override async alarm(): Promise<void> {
    await leaseTick(this.c)
    await this.rearm()
  }

  // ── RPC ──────────────────────────────────────────────────────────────────────────────────────────────────────

  async openSession(spec: SessionSpec): Promise<OpenOutcome> {
    return openSession(this.c, spec)
  }

  async dispatchSend(sid: string, message: OutboundMessage, expiresAt: number): Promise<boolean> {
    return dispatchSend(this.c, sid, message, expiresAt)
  }

  async logoutSession(sid: string): Promise<{ reached: boolean }> {
    const out = logoutSession(this.c, sid)
    await this.rearm()
    return out
  }

  async probeSession(sid: string, timeoutMs: number): Promise<SessionState | null> {
    return probeSession(this.c, sid, timeoutMs)
  }

  /**
   * Which account a relay may upload media for under this session: the relay holding the lease, or one that held it
   * under an earlier fence (its messages are still accepted after a failover, so their media must be too).
   */
  async mediaUploadScope(relayId: string, relayTenantId: string | null, sid: string, fence: number): Promise<{ tenantId: string; accountId: string } | null> {
    const row = this.c.store.bySid(sid)
    if (!row || fence > row.fence) return null
    const holder = row.relayId === relayId && row.fence === fence
    // An earlier holder in scope, as for late data frames (inbox.ts): a service relay not for a tenant with its own.
    const earlier =
      fence < row.fence && inScope({ att: { tenantId: relayTenantId } }, row, relayTenantId === null ? await tenantsWithOwnRelays(this.c.db) : new Set())
    return holder || earlier ? { tenantId: row.tenantId, accountId: row.accountId } : null
  }

  async loginStep(sid: string, step: LoginStep, timeoutMs: number): Promise<LoginOutcome | null> {
    return loginStep(this.c, sid, step, timeoutMs)
  }

  async chatAction(sid: string, action: ChatAction, timeoutMs: number): Promise<ActionOutcome | null> {
    return chatAction(this.c, sid, action, timeoutMs)
  }

  async relayLinks(): Promise<RelayLinkView[]> {
    return relayLinks(this.c)
  }

  async cutRelay(relayId: string): Promise<number> {
    return cutRelay(this.c, relayId)
  }

  // ─────────────────────────────────────────────────────────────────────────────────────────────────────────────

  private onRelayClose(ws: WebSocket, why: string): void {
    const att = attachmentOf(ws)
    if (!att) return
    const link = { ws, att }
    this.c.log('relay link closed', { relay: att.relayId, instance: att.instance, why })
    linkGone(this.c, link, lastSeen(this.ctx, link, this.c.framesSeen))
  }

  private async rearm(): Promise<void> {
    const next = nextCheckAt(this.c)
    if (next === null) await this.ctx.storage.deleteAlarm()
    else {
      const current = await this.ctx.storage.getAlarm()
      if (current === null || current > next) await this.ctx.storage.setAlarm(next)
    }
  }
}
