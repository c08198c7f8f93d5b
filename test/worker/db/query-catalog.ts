/// <reference types="vite/client" />
/**
 * Every query of worker/db, called once with plausible arguments (issue 22 §3): the query-plan test runs each through
 * a metering D1 binding, collects the SQL it sent and asks SQLite for its plan. Each entry names the path that runs
 * it: `hot` is a request or a message (send, inbound, wait, list, status, delivery), `cron` the minute cron, `admin`
 * an admin or setup call. A function of worker/db that sends SQL and is missing here fails the coverage test.
 */
import { env } from 'cloudflare:workers'
import { sql } from 'drizzle-orm'
import { z } from 'zod'
import * as accountStats from '../../../worker/db/account-stats'
import * as accounts from '../../../worker/db/accounts'
import * as apiKeys from '../../../worker/db/api-keys'
import * as approvals from '../../../worker/db/approvals'
import * as audit from '../../../worker/db/audit'
import * as channelConnections from '../../../worker/db/channel-connections'
import type { Db } from '../../../worker/db/client'
import * as contacts from '../../../worker/db/contacts'
import * as cursorMaps from '../../../worker/db/cursor-maps'
import * as edgeMetrics from '../../../worker/db/edge-metrics'
import * as eventFeed from '../../../worker/db/event-feed'
import * as events from '../../../worker/db/events'
import * as fences from '../../../worker/db/fences'
import * as idempotency from '../../../worker/db/idempotency'
import * as media from '../../../worker/db/media'
import * as messageRetention from '../../../worker/db/message-retention'
import * as messages from '../../../worker/db/messages'
import * as moveRows from '../../../worker/db/move-rows'
import * as placement from '../../../worker/db/placement'
import * as reactions from '../../../worker/db/reactions'
import * as relays from '../../../worker/db/relays'
import * as sealedValues from '../../../worker/db/sealed-values'
import * as shardStats from '../../../worker/db/shard-stats'
import * as sms from '../../../worker/db/sms'
import * as social from '../../../worker/db/social'
import * as tenants from '../../../worker/db/tenants'
import * as webhookDeliveries from '../../../worker/db/webhook-deliveries'
import * as webhookHealth from '../../../worker/db/webhook-health'
import * as webhookReplays from '../../../worker/db/webhook-replays'
import * as webhooks from '../../../worker/db/webhooks'
import { keyring } from '../../../worker/config'
import { limitReachedPayload, messageEventPayload } from '../../../worker/events/payloads'

export type Path = 'hot' | 'cron' | 'admin'
/** Runs the query (an awaited call, or a statement the catalog executes). */
export type Call = (db: Db) => unknown
export type Entry = { path: Path; call: Call }

/** Modules of worker/db without queries of their own (helpers, shapes, the R2 archive). */
const HELPER_MODULES = new Set(['client', 'compiled', 'constant-row', 'group-commit', 'json-list', 'message-archive', 'prune', 'shards', 'wire', 'wire-media'])

/** Every other module of worker/db, by file name: found on disk, so a new one is held to the catalog too. */
export const MODULES = new Map(
  Object.entries(import.meta.glob<Record<string, unknown>>('../../../worker/db/*.ts', { eager: true }))
    .map(([path, module]) => [path.replace(/^.*\/(.*)\.ts$/, '$1'), module] as const)
    .filter(([name]) => !HELPER_MODULES.has(name))
)

/** Exports that send no SQL of their own (pure helpers, shapes). */
export const NOT_QUERIES = new Set([
  'api-keys.grantOf',
  'channel-connections.sealConnectionConfig',
  'channel-connections.connectionSealedAt',
  'contacts.optOutChange',
  'contacts.displayName',
  'reactions.parseReactions',
  'reactions.reactionChanges',
  'event-filter.passesFilter',
  'event-filter.filterText',
  'events.eventOf',
  'events.eventsWritten',
  'message-retention.retentionDays',
  'webhooks.isDuplicateName',
  'webhooks.subscriptionLive',
  'cursor-maps.mapThrough',
  'fences.unfenced',
  'fences.livesHere',
  'move-rows.pageDigest',
  'shard-stats.shardLevel',
  'shard-stats.roomiest',
  'placement.clearPlacementCache',
  // These take the Env and run tenantPlacement (below) on the directory, through the isolate's cache.
  'placement.cachedPlacement',
  'placement.tenantDb',
  'placement.knownTenantDb',
  // Takes the Env and answers a reader that runs tenantPlacement (below) on the directory, past the cache.
  'placement.placementReader',
  // These take the Env and run databaseSize on every shard and tenantsPerShard on the directory (both below).
  'shard-stats.shardStats',
  'shard-stats.roomiestShard',
])

const T = 'ten_plan'
const A = '+15550001'
const NOW = 1_900_000_000_000
const PAYLOAD = limitReachedPayload('daily_send_cap', NOW)
const FAILED = messageEventPayload(
  'message.failed',
  { id: 'msg_held', accountId: A, direction: 'outbound', text: 'x', mediaUrl: null, mediaContentType: null, status: 'failed', errorMessage: 'expired' },
  { id: 'ct_plan', phone: null, name: null },
  'sms',
  NOW
)
// The largest variant of the received-event insert: a beta contact (with @username) and a reply.
const RECEIVED = messageEventPayload(
  'message.received',
  {
    id: 'msg_plan_in',
    accountId: A,
    direction: 'inbound',
    text: 'hi',
    mediaUrl: null,
    mediaContentType: null,
    status: 'received',
    errorMessage: null,
    replyTo: 'up_2',
  },
  { id: 'ct_plan', phone: null, name: null },
  'beta',
  NOW
)
const seed = { id: 'ct_plan', tenantId: T, accountId: A, channel: 'sms' as const, phone: '+15550002' }
const message = {
  id: 'msg_plan',
  tenantId: T,
  accountId: A,
  contactId: 'ct_plan',
  direction: 'outbound' as const,
  text: 'x',
  status: 'queued' as const,
  createdAt: NOW,
  updatedAt: NOW,
}
const inbound = {
  id: 'msg_plan_in',
  tenantId: T,
  accountId: A,
  contactId: 'ct_plan',
  text: 'hi',
  mediaUrl: null,
  mediaContentType: null,
  mediaId: null,
  mediaKind: null,
  mediaSize: null,
  mediaFileName: null,
  mediaError: null,
  mediaStatus: null,
  upstreamId: 'up_1',
  replyTo: 'up_2',
}
const owner = { tenantId: T, accountId: A }
const failure = {
  statusCode: 500,
  failureType: 'temporary' as const,
  message: 'x',
  gone: false,
  pause: { afterConsecutiveFailures: 5, minFailingMs: 3_600_000 },
}
const flow = { id: 'flow_plan', tenantId: T, status: 'pending' as const, stateHash: 'h', expiresAt: NOW, createdAt: NOW, updatedAt: NOW }
const page = {
  tenantId: T,
  accountId: 'page_1',
  pageId: 'p1',
  pageName: 'P',
  instagramId: null,
  instagramUsername: null,
  token: 't',
  createdAt: NOW,
  updatedAt: NOW,
}
const app = { tenantId: T, webhookId: 'w', appId: 'a', configId: 'c', secret: 's', verifyToken: 'v', createdAt: NOW, updatedAt: NOW }
const sealedAt = { column: 'webhooks.signing_secret' as const, tenantId: T, rowId: 'wh_1' }

const MESSAGES_TABLE = moveRows.MOVED_TABLES.find((t) => t.name === 'messages')!
const MOVE_ROW = { ...message, seq: 7 }

export const CATALOG: Record<string, Entry> = {
  'webhooks.expireKeySubscriptions': { path: 'admin', call: (db) => webhooks.expireKeySubscriptions(db, T, 'key_1', NOW) },
  // The directory's placement and a move's writes to it (worker/shards/move.ts): a request reads the placement once
  // per 5 s per isolate, through the key lookup or tenantDb.
  'placement.tenantPlacement': { path: 'hot', call: (db) => placement.tenantPlacement(db, T) },
  'placement.tenantsPerShard': { path: 'admin', call: (db) => placement.tenantsPerShard(db) },
  'placement.claimMove': { path: 'admin', call: (db) => placement.claimMove(db, T, 0, 1) },
  'placement.flipPlacement': { path: 'admin', call: (db) => placement.flipPlacement(db, T, 0, 1, 1) },
  'placement.releaseMove': { path: 'admin', call: (db) => placement.releaseMove(db, T, 1) },
  'shard-stats.databaseSize': { path: 'admin', call: (db) => shardStats.databaseSize(db.$client) },
  'fences.setFence': { path: 'admin', call: (db) => fences.setFence(db, T, 'leaving', 'mov_1', NOW) },
  'fences.clearFence': { path: 'admin', call: (db) => fences.clearFence(db, T, 'mov_1') },
  'cursor-maps.seqHere': { path: 'hot', call: (db) => cursorMaps.seqHere(db, { id: T, placement: 1 }, 'messages', { seq: 5, placement: 0 }, 'after') },
  'cursor-maps.recordSegment': { path: 'admin', call: (db) => cursorMaps.recordSegment(db, T, 'messages', 1, { oldFirst: 1, oldLast: 9, delta: 100 }) },
  // A move's pages: every one seeks the tenant's range of an index led by tenant_id.
  'move-rows.readPage': { path: 'admin', call: (db) => moveRows.readPage(db, MESSAGES_TABLE, T, [7], 200) },
  'move-rows.readPage(keys)': { path: 'admin', call: (db) => moveRows.readPage(db, moveRows.MOVED_TABLES.find((t) => t.keys.length > 0)!, T, null, 200) },
  'move-rows.copyStatements': { path: 'admin', call: (db) => moveRows.copyStatements(db, MESSAGES_TABLE, T, 1, [MOVE_ROW]) },
  'move-rows.copiedUpTo': { path: 'admin', call: (db) => moveRows.copiedUpTo(db, MESSAGES_TABLE, T, 1) },
  'move-rows.segmentsBetween': { path: 'admin', call: (db) => moveRows.segmentsBetween(db, MESSAGES_TABLE, T, 1, 1, 9) },
  'move-rows.deletePage': { path: 'admin', call: (db) => moveRows.deletePage(db, MESSAGES_TABLE, T, 200) },
  'move-rows.statsOf': { path: 'admin', call: (db) => moveRows.statsOf(db, T) },
  'move-rows.carryStatsStatements': {
    path: 'admin',
    call: (db) => moveRows.carryStatsStatements(db, T, [{ accountId: A, messageCount: 0, lastInboundAt: NOW, lastOutboundAt: null }]),
  },
  'move-rows.dropZeroStats': { path: 'admin', call: (db) => moveRows.dropZeroStats(db, T) },
  'move-rows.accountObjectsOf': { path: 'admin', call: (db) => moveRows.accountObjectsOf(db, T) },

  'account-stats.accountFigures': { path: 'hot', call: (db) => accountStats.accountFigures(db, T, A) },

  'accounts.listAccounts': { path: 'hot', call: (db) => accounts.listAccounts(db, T) },
  'accounts.tenantAndAccounts': { path: 'hot', call: (db) => accounts.tenantAndAccounts(db, T) },
  'accounts.getAccount': { path: 'hot', call: (db) => accounts.getAccount(db, T, A) },
  'accounts.insertAccountWithinCap': {
    path: 'admin',
    call: (db) =>
      accounts.insertAccountWithinCap(db, { tenantId: T, id: A, channel: 'sms', identifier: A, status: 'connected', connectedAt: NOW, now: NOW }, 1),
  },
  'accounts.reviveAccountWithinCap': { path: 'admin', call: (db) => accounts.reviveAccountWithinCap(db, T, A, 1, NOW) },
  'accounts.accountStatusUpdate': { path: 'hot', call: (db) => accounts.accountStatusUpdate(db, T, A, { status: 'connected', reason: null, now: NOW }) },
  'accounts.restoreRestrictedAccounts': { path: 'admin', call: (db) => accounts.restoreRestrictedAccounts(db, T, 'opener_burst', NOW) },
  'accounts.deleteAccountStatement': { path: 'admin', call: (db) => accounts.deleteAccountStatement(db, T, 'gone') },

  'api-keys.issueApiKey': { path: 'admin', call: (db) => apiKeys.issueApiKey(db, T, NOW) },
  'api-keys.ownerOfApiKey': { path: 'hot', call: (db) => apiKeys.ownerOfApiKey(db, 'svc_live_x') },
  'api-keys.tenantForApiKey': { path: 'hot', call: (db) => apiKeys.tenantForApiKey(db, 'svc_live_x') },
  'api-keys.listApiKeys': { path: 'admin', call: (db) => apiKeys.listApiKeys(db, T) },
  'api-keys.getApiKey': { path: 'admin', call: (db) => apiKeys.getApiKey(db, T, 'key_1') },
  'api-keys.revokeApiKey': { path: 'admin', call: (db) => apiKeys.revokeApiKey(db, 'key_1', NOW, T) },

  'approvals.insertApproval': {
    path: 'hot',
    call: (db) => approvals.insertApproval(db, { messageId: 'msg_held', tenantId: T, accountId: A, keyId: 'k', expiresAt: NOW, createdAt: NOW }),
  },
  'approvals.getApproval': { path: 'hot', call: (db) => approvals.getApproval(db, T, 'msg_held') },
  'approvals.claimDecision': { path: 'hot', call: (db) => approvals.claimDecision(db, T, 'msg_held', 'approved', NOW) },
  'approvals.dueApprovals': { path: 'cron', call: (db) => approvals.dueApprovals(db, NOW, 50) },
  'approvals.failHeldMessage': {
    path: 'hot',
    call: (db) => approvals.failHeldMessage(db, T, A, 'msg_held', 'expired', FAILED, NOW),
  },
  'approvals.releaseHeldMessage': { path: 'hot', call: (db) => approvals.releaseHeldMessage(db, 'msg_held', NOW) },

  'audit.auditInsert': {
    path: 'hot',
    call: (db) =>
      audit.auditInsert(db, {
        tenantId: T,
        keyId: 'k',
        keyLabel: null,
        action: 'POST /v1/messages',
        route: 'POST /v1/messages',
        accountId: A,
        contactId: null,
        messageId: null,
        outcome: 'accepted',
        code: null,
        status: 202,
        createdAt: NOW,
      }),
  },
  'audit.listAudit': { path: 'hot', call: (db) => audit.listAudit(db, { tenantId: T, keyId: 'k', limit: 50, beforeSeq: 100 }) },
  'audit.pruneAudit': { path: 'cron', call: (db) => audit.pruneAudit(db, NOW, 500) },

  'channel-connections.readConnectionConfig': {
    path: 'hot',
    call: (db) => channelConnections.readConnectionConfig(db, keyring(env), T, A, z.unknown()),
  },
  'channel-connections.upsertConnectionConfig': { path: 'admin', call: (db) => channelConnections.upsertConnectionConfig(db, T, A, 'sms', 'sealed', NOW) },
  'channel-connections.deleteConnectionConfig': { path: 'admin', call: (db) => channelConnections.deleteConnectionConfig(db, T, A) },

  'contacts.getContact': { path: 'hot', call: (db) => contacts.getContact(db, T, 'ct_plan') },
  'contacts.insertContactIfMissing': { path: 'hot', call: (db) => contacts.insertContactIfMissing(db, seed, NOW) },
  'contacts.upsertInboundContact': { path: 'hot', call: (db) => contacts.upsertInboundContact(db, seed, 'hello', 'up_1', NOW) },
  'contacts.upsertImportedContact': { path: 'hot', call: (db) => contacts.upsertImportedContact(db, seed, { aiPaused: false, private: false }, NOW) },
  'contacts.findContactByPhone': { path: 'hot', call: (db) => contacts.findContactByPhone(db, T, A, '+15550002') },
  'contacts.contactIdsByPhone': { path: 'hot', call: (db) => contacts.contactIdsByPhone(db, T, A, ['+15550002']) },

  'events.insertEvent': { path: 'hot', call: (db) => events.insertEvent(db, T, A, PAYLOAD, NOW) },
  'events.insertEventIfAccount': {
    path: 'hot',
    call: (db) => events.insertEventIfAccount(db, T, A, PAYLOAD, NOW, sql`tenant_id = ${T} and id = ${A} and status <> 'connected'`),
  },
  'events.insertEventIfMessage': { path: 'hot', call: (db) => events.insertEventIfMessage(db, T, A, PAYLOAD, NOW, sql`id = 'msg_plan'`) },
  'events.insertReceivedEvent': { path: 'hot', call: (db) => events.insertReceivedEvent(db, T, A, RECEIVED, inbound, NOW) },
  'event-feed.readFeed': {
    path: 'hot',
    call: (db) => eventFeed.readFeed(db, { tenantId: T, type: 'message.received', afterSeq: 10, filter: null, notBefore: NOW - 86_400_000, limit: 50 }),
  },
  'event-feed.headSeq': { path: 'hot', call: (db) => eventFeed.headSeq(db) },
  'event-feed.deliveryWatermark': { path: 'hot', call: (db) => eventFeed.deliveryWatermark(db, T, 'wh_1') },
  'edge-metrics.allAccounts': { path: 'admin', call: (db) => edgeMetrics.allAccounts(db) },
  'edge-metrics.webhookFigures': { path: 'admin', call: (db) => edgeMetrics.webhookFigures(db, NOW) },
  'events.pendingEvents': { path: 'hot', call: (db) => events.pendingEvents(db, owner, 50) },
  'events.markDispatched': { path: 'hot', call: (db) => events.markDispatched(db, ['evt_1'], NOW) },
  'events.eventsByIds': { path: 'hot', call: (db) => events.eventsByIds(db, ['evt_1']) },
  'events.eventsInWindow': { path: 'hot', call: (db) => events.eventsInWindow(db, T, ['message.received'], null, NOW - 3_600_000, NOW, 100) },
  'events.undispatchedOwners': { path: 'cron', call: (db) => events.undispatchedOwners(db, NOW, 100) },
  'events.pruneEvents': { path: 'cron', call: (db) => events.pruneEvents(db, NOW, 500) },

  'media.getMedia': { path: 'hot', call: (db) => media.getMedia(db, 'med_1') },
  'media.upsertMedia': {
    path: 'hot',
    call: (db) =>
      media.upsertMedia(db, {
        id: 'med_1',
        tenantId: T,
        accountId: A,
        kind: 'image',
        contentType: 'image/jpeg',
        size: 1,
        fileName: null,
        status: 'stored',
        reason: null,
        createdAt: NOW,
      }),
  },
  'media.mediaCreatedBefore': { path: 'cron', call: (db) => media.mediaCreatedBefore(db, NOW, 500) },
  'media.mediaOfAccount': { path: 'admin', call: (db) => media.mediaOfAccount(db, T, A, 500) },
  'media.deleteMediaRows': { path: 'cron', call: (db) => media.deleteMediaRows(db, ['med_1']) },

  'message-retention.retentionDue': { path: 'cron', call: (db) => messageRetention.retentionDue(db, NOW, 20) },
  'message-retention.markRetentionChecked': { path: 'cron', call: (db) => messageRetention.markRetentionChecked(db, T, NOW) },
  'message-retention.deleteMessagesStatement': { path: 'cron', call: (db) => messageRetention.deleteMessagesStatement(db, [1, 2]) },
  'message-retention.deleteMediaRowsStatement': { path: 'cron', call: (db) => messageRetention.deleteMediaRowsStatement(db, ['med_1']) },
  'message-retention.pruneContactsStatement': { path: 'cron', call: (db) => messageRetention.pruneContactsStatement(db, T, ['ct_plan'], NOW, NOW) },

  'messages.getMessage': { path: 'hot', call: (db) => messages.getMessage(db, T, 'msg_plan') },
  'messages.listMessages': { path: 'hot', call: (db) => messages.listMessages(db, { tenantId: T, accountId: A, limit: 50, beforeSeq: 100 }) },
  'messages.listMessages(outbound)': { path: 'hot', call: (db) => messages.listMessages(db, { tenantId: T, accountId: A, direction: 'outbound', limit: 50 }) },
  'messages.listMessages(tenant)': { path: 'hot', call: (db) => messages.listMessages(db, { tenantId: T, limit: 50 }) },
  'messages.listMessages(tenant, outbound)': { path: 'hot', call: (db) => messages.listMessages(db, { tenantId: T, direction: 'outbound', limit: 50 }) },
  'messages.listMessages(key accounts)': { path: 'hot', call: (db) => messages.listMessages(db, { tenantId: T, accountIds: [A, 'custom'], limit: 50 }) },
  'messages.listMessages(inbound)': { path: 'hot', call: (db) => messages.listMessages(db, { tenantId: T, accountId: A, direction: 'inbound', limit: 50 }) },
  'messages.inboundAfter': { path: 'hot', call: (db) => messages.inboundAfter(db, T, [A], 100, 50) },
  'messages.inboundAfter(accounts)': { path: 'hot', call: (db) => messages.inboundAfter(db, T, [A, 'custom'], 100, 50) },
  'messages.latestSeq': { path: 'hot', call: (db) => messages.latestSeq(db, T) },
  'messages.oldestMessages': { path: 'cron', call: (db) => messages.oldestMessages(db, T, 500) },
  'messages.insertMessage': { path: 'hot', call: (db) => messages.insertMessage(db, message) },
  'messages.insertInboundUnlessPrivate': { path: 'hot', call: (db) => messages.insertInboundUnlessPrivate(db, inbound, NOW) },
  'messages.findByUpstreamId': { path: 'hot', call: (db) => messages.findByUpstreamId(db, T, A, 'outbound', 'up_2') },
  'messages.findByUpstreamIdAnyDirection': { path: 'hot', call: (db) => messages.findByUpstreamIdAnyDirection(db, T, A, 'up_2') },
  'messages.findByUpstreamIds': { path: 'hot', call: (db) => messages.findByUpstreamIds(db, T, A, 'outbound', ['up_1', 'up_2']) },
  'messages.quotedMessages': { path: 'hot', call: (db) => messages.quotedMessages(db, T, ['msg_plan']) },
  'messages.queuedMessages': { path: 'hot', call: (db) => messages.queuedMessages(db, T, A, NOW) },
  'messages.hasQueued': { path: 'hot', call: (db) => messages.hasQueued(db, T, A) },
  'messages.markAttempt': { path: 'hot', call: (db) => messages.markAttempt(db, 'msg_plan', NOW) },
  'messages.deferAttempt': { path: 'hot', call: (db) => messages.deferAttempt(db, 'msg_plan', NOW, 'later') },
  'messages.updateMessageStatus': { path: 'hot', call: (db) => messages.updateMessageStatus(db, { status: 'sent' }, NOW, sql`id = 'msg_plan'`) },
  'messages.countAccountMessages': { path: 'hot', call: (db) => messages.countAccountMessages(db, T, A) },
  'messages.unreadOutboundBefore': { path: 'hot', call: (db) => messages.unreadOutboundBefore(db, T, A, 'ct_plan', NOW) },

  'relays.issueRelayToken': { path: 'admin', call: (db) => relays.issueRelayToken(db, T, 'r', NOW) },
  'relays.relayForToken': { path: 'hot', call: (db) => relays.relayForToken(db, 'rly_x') },
  'relays.listRelays': { path: 'admin', call: (db) => relays.listRelays(db) },
  'relays.revokeRelay': { path: 'admin', call: (db) => relays.revokeRelay(db, 'rly_1', NOW) },
  'relays.tenantsWithOwnRelays': { path: 'hot', call: (db) => relays.tenantsWithOwnRelays(db) },

  'sealed-values.sealedValuesToReseal': {
    path: 'admin',
    call: (db) => sealedValues.sealedValuesToReseal(db.$client, 'webhooks.signing_secret', 'v2:', { tenantId: T, rowId: 'a' }, 100),
  },
  'sealed-values.resealStatement': { path: 'admin', call: (db) => sealedValues.resealStatement(db.$client, sealedAt, 'a', 'b') },
  'sealed-values.countNotCurrent': { path: 'admin', call: (db) => sealedValues.countNotCurrent(db.$client, 'webhooks.signing_secret', 'v2:') },
  'sealed-values.resealPage': { path: 'admin', call: (db) => sealedValues.resealPage([db.$client], keyring(env), sealedValues.RESEAL_START, 10) },

  'reactions.mergeReaction': { path: 'hot', call: (db) => reactions.mergeReaction(db, T, 'msg_plan', { from: 'ct_plan', emoji: '👍', at: NOW }) },

  'sms.setContactOptedOut': { path: 'hot', call: (db) => sms.setContactOptedOut(db, T, 'ct_plan', true, NOW) },
  'sms.lastMessageTimes': { path: 'hot', call: (db) => sms.lastMessageTimes(db, T, A) },

  'social.getSocialApp': { path: 'hot', call: (db) => social.getSocialApp(db, T) },
  'social.socialAppByWebhook': { path: 'hot', call: (db) => social.socialAppByWebhook(db, 'w') },
  'social.upsertSocialApp': { path: 'admin', call: (db) => social.upsertSocialApp(db, app) },
  'social.insertSocialFlow': { path: 'admin', call: (db) => social.insertSocialFlow(db, flow) },
  'social.latestSocialFlow': { path: 'admin', call: (db) => social.latestSocialFlow(db, T) },
  'social.spendSocialState': { path: 'admin', call: (db) => social.spendSocialState(db, 'h', NOW) },
  'social.socialFlowByState': { path: 'admin', call: (db) => social.socialFlowByState(db, 'h') },
  'social.getSocialFlow': { path: 'admin', call: (db) => social.getSocialFlow(db, T, 'flow_plan') },
  'social.updateSocialFlow': { path: 'admin', call: (db) => social.updateSocialFlow(db, 'flow_plan', { status: 'failed' }, NOW) },
  'social.insertSocialPage': { path: 'admin', call: (db) => social.insertSocialPage(db, page) },
  'social.getSocialPage': { path: 'hot', call: (db) => social.getSocialPage(db, T, 'page_1') },
  'social.listSocialPages': { path: 'hot', call: (db) => social.listSocialPages(db, T) },
  'social.socialPageByOwner': { path: 'hot', call: (db) => social.socialPageByOwner(db, T, 'p1') },
  'social.deleteSocialPage': { path: 'admin', call: (db) => social.deleteSocialPage(db, T, 'page_1') },

  'tenants.createTenant': { path: 'admin', call: (db) => tenants.createTenant(db, { shard: 0, db }, 'free', NOW) },
  'tenants.getTenant': { path: 'hot', call: (db) => tenants.getTenant(db, T) },
  'tenants.mirrorTenantStatement': {
    path: 'admin',
    call: (db) =>
      tenants.mirrorTenantStatement(db, {
        id: T,
        plan: 'free',
        status: 'active',
        suspendedReason: null,
        suspendedAt: null,
        apiEnabled: true,
        webhooksEnabled: true,
        createdAt: NOW,
        messageRetentionDays: null,
        retentionCheckedAt: 0,
        shard: 1,
        placement: 0,
        movingTo: null,
        alphaPasskeyLinking: false,
      }),
  },
  'tenants.updateTenant': { path: 'admin', call: (db) => tenants.updateTenant(db, { shard: 0, db }, T, { plan: 'free', messageRetentionDays: 30 }) },
  'tenants.suspendTenant': { path: 'hot', call: (db) => tenants.suspendTenant(db, 'ten_none', 'opener_burst', NOW) },

  'webhook-deliveries.fanOutDeliveries': { path: 'hot', call: (db) => webhookDeliveries.fanOutDeliveries(db, ['evt_1'], NOW, NOW + 1, 'paused') },
  'webhook-deliveries.insertDelivery': {
    path: 'hot',
    call: (db) =>
      webhookDeliveries.insertDelivery(db, {
        id: 'dlv_1',
        tenantId: T,
        webhookId: 'wh_1',
        eventId: 'evt_1',
        eventType: 'message.received',
        accountId: A,
        status: 'pending',
        createdAt: NOW,
        updatedAt: NOW,
      }),
  },
  'webhook-deliveries.claimDue': { path: 'hot', call: (db) => webhookDeliveries.claimDue(db, owner, NOW, NOW + 1, 10) },
  'webhook-deliveries.finishAttempt': {
    path: 'hot',
    call: (db) => webhookDeliveries.finishAttempt(db, 'dlv_1', 1, { status: 'delivered', statusCode: 200 }, NOW),
  },
  'webhook-deliveries.nextWakeAt': { path: 'hot', call: (db) => webhookDeliveries.nextWakeAt(db, owner) },
  'webhook-deliveries.listDeliveries': {
    path: 'hot',
    call: (db) =>
      webhookDeliveries.listDeliveries(db, { tenantId: T, webhookId: 'wh_1', since: NOW - 86_400_000, limit: 50, before: { createdAt: NOW, id: 'dlv_9' } }),
  },
  'webhook-deliveries.deliveriesByIds': { path: 'hot', call: (db) => webhookDeliveries.deliveriesByIds(db, ['dlv_1']) },
  'webhook-deliveries.requeueDelivery': { path: 'hot', call: (db) => webhookDeliveries.requeueDelivery(db, 'dlv_1', NOW) },
  'webhook-deliveries.deleteDeliveriesOf': { path: 'admin', call: (db) => webhookDeliveries.deleteDeliveriesOf(db, T, 'wh_gone') },
  'webhook-deliveries.overdueOwners': { path: 'cron', call: (db) => webhookDeliveries.overdueOwners(db, NOW, 100) },
  'webhook-deliveries.pruneDeliveries': { path: 'cron', call: (db) => webhookDeliveries.pruneDeliveries(db, NOW, 500) },

  'webhook-health.getHealth': { path: 'hot', call: (db) => webhookHealth.getHealth(db, T, 'https://x.example') },
  'webhook-health.healthByUrl': { path: 'hot', call: (db) => webhookHealth.healthByUrl(db, T, ['https://x.example']) },
  'webhook-health.recordSuccess': { path: 'hot', call: (db) => webhookHealth.recordSuccess(db, T, 'https://x.example', NOW) },
  'webhook-health.recordFailure': { path: 'hot', call: (db) => webhookHealth.recordFailure(db, T, 'https://x.example', failure, NOW) },
  'webhook-health.reenableHealth': { path: 'admin', call: (db) => webhookHealth.reenableHealth(db, T, 'https://x.example', NOW) },
  'webhook-health.resetHealth': { path: 'admin', call: (db) => webhookHealth.resetHealth(db, T, 'https://x.example') },

  'idempotency.claimIdempotencyKey': {
    path: 'hot',
    call: (db) => idempotency.claimIdempotencyKey(db, { tenantId: T, keyHash: 'kh_1', fingerprint: 'fp_1', claim: 'idc_1', now: NOW }),
  },
  'idempotency.storeIdempotentAnswer': { path: 'hot', call: (db) => idempotency.storeIdempotentAnswer(db, T, 'kh_1', 'idc_1', 202, 'v2.x') },
  'idempotency.releaseIdempotencyKey': { path: 'hot', call: (db) => idempotency.releaseIdempotencyKey(db, T, 'kh_1', 'idc_1') },
  'idempotency.pruneIdempotencyKeys': { path: 'cron', call: (db) => idempotency.pruneIdempotencyKeys(db, NOW) },

  'webhook-replays.startReplay': { path: 'admin', call: (db) => webhookReplays.startReplay(db, 'wh_1', NOW) },
  'webhook-replays.finishReplay': { path: 'admin', call: (db) => webhookReplays.finishReplay(db, 'rep_1', NOW) },

  'webhooks.listWebhooks': { path: 'hot', call: (db) => webhooks.listWebhooks(db, T) },
  'webhooks.insertWebhookWithinCap': {
    path: 'admin',
    call: (db) =>
      webhooks.insertWebhookWithinCap(
        db,
        { id: 'wh_1', tenantId: T, name: 'n', url: 'https://x.example', subscribedTo: '[]', createdAt: NOW, updatedAt: NOW },
        10
      ),
  },
  'webhooks.upsertMcpSubscription': {
    path: 'hot',
    call: (db) =>
      webhooks.upsertMcpSubscription(
        db,
        {
          id: 'wh_mcp',
          tenantId: T,
          name: 'mcp',
          url: 'https://x.example',
          subscribedTo: '[]',
          origin: 'mcp',
          keyId: 'k',
          expiresAt: NOW,
          createdAt: NOW,
          updatedAt: NOW,
        },
        10
      ),
  },
  'webhooks.lapsedMcpSubscriptions': { path: 'cron', call: (db) => webhooks.lapsedMcpSubscriptions(db, NOW, 100) },
  'webhooks.updateWebhook': { path: 'admin', call: (db) => webhooks.updateWebhook(db, T, 'wh_1', { enabled: true }, NOW) },
  'webhooks.deleteWebhook': { path: 'admin', call: (db) => webhooks.deleteWebhook(db, T, 'wh_gone') },
  'webhooks.webhooksByIds': { path: 'hot', call: (db) => webhooks.webhooksByIds(db, T, ['wh_1']) },
  'webhooks.enabledWebhooks': { path: 'hot', call: (db) => webhooks.enabledWebhooks(db, T) },
}
