/**
 * The MCP Events extension (SEP-3415, `io.modelcontextprotocol/events`) on one server: `events/list`, `events/poll`,
 * `events/stream`, `events/subscribe` and `events/unsubscribe`. Each request names its event and arguments and is
 * checked against the key first (access.ts); then poll.ts, stream.ts or subscribe.ts serve it.
 */
import type { Server } from '@modelcontextprotocol/server'
import type { Db } from '../../db/client'
import type { Tenant } from '../../db/tenants'
import type { KeyGrant } from '../../safety/grant'
import { resolveSubscription } from './access'
import { eventCatalog } from './catalog'
import type { FeedContext } from './feed'
import { pollEvents } from './poll'
import { ListEventsParams, PollParams, StreamParams, SubscribeParams, UnsubscribeParams } from './shapes'
import { streamEvents } from './stream'
import { subscribeEvents, unsubscribeEvents, type SubscribeContext } from './subscribe'

export const EVENTS_EXTENSION = 'io.modelcontextprotocol/events'

export type EventsContext = {
  env: Env
  db: Db
  tenant: Tenant
  grant: KeyGrant
  /** The /mcp request's URL: the service's own hosts are refused as callback URLs. */
  requestUrl: string
  /** Aborts when the client disconnects: a held poll or an open stream stops at once. */
  clientGone: AbortSignal
  now: () => number
}

export function registerEvents(server: Server, c: EventsContext): void {
  const feed: FeedContext = { env: c.env, db: c.db, tenantId: c.tenant.id, placement: c.tenant.placement }
  const hooks = (): SubscribeContext => ({ env: c.env, db: c.db, tenant: c.tenant, grant: c.grant, requestUrl: c.requestUrl, now: c.now() })
  const until = (signal: AbortSignal) => AbortSignal.any([signal, c.clientGone])

  server.setRequestHandler('events/list', { params: ListEventsParams }, () => ({ events: eventCatalog(c.grant, c.tenant.webhooksEnabled) }))

  server.setRequestHandler('events/poll', { params: PollParams }, (p, ctx) =>
    pollEvents(feed, resolveSubscription(c.grant, p.name, p.arguments), p, until(ctx.mcpReq.signal), c.now)
  )

  server.setRequestHandler('events/stream', { params: StreamParams }, (p, ctx) =>
    streamEvents(
      feed,
      resolveSubscription(c.grant, p.name, p.arguments),
      p,
      { id: ctx.mcpReq.id, notify: (n) => ctx.mcpReq.notify(n), signal: until(ctx.mcpReq.signal) },
      c.now
    )
  )

  server.setRequestHandler('events/subscribe', { params: SubscribeParams }, (p) =>
    subscribeEvents(hooks(), resolveSubscription(c.grant, p.name, p.arguments), p)
  )

  server.setRequestHandler('events/unsubscribe', { params: UnsubscribeParams }, (p) =>
    unsubscribeEvents(hooks(), resolveSubscription(c.grant, p.name, p.arguments), p)
  )
}
