/**
 * D1 tables (Drizzle): the system of record for tenants, keys, accounts, contacts, messages and events.
 * Migrations are generated from this file by drizzle-kit into schema/migrations and applied by wrangler.
 * Times are Unix epoch milliseconds in plain integer columns.
 */
import { sql } from 'drizzle-orm'
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core'

export const CHANNELS = ['alpha_web', 'beta', 'sms', 'social', 'custom'] as const
export type Channel = (typeof CHANNELS)[number]

export const ACCOUNT_STATUSES = ['connected', 'connecting', 'disconnected', 'restricted'] as const
export type AccountStatus = (typeof ACCOUNT_STATUSES)[number]

export const MESSAGE_STATUSES = ['queued', 'sent', 'delivered', 'read', 'failed', 'received'] as const
export type MessageStatus = (typeof MESSAGE_STATUSES)[number]

export const tenants = sqliteTable('tenants', {
  id: text('id').primaryKey(),
  plan: text('plan').notNull(),
  status: text('status', { enum: ['active', 'suspended'] }).notNull().default('active'),
  suspendedReason: text('suspended_reason'),
  suspendedAt: integer('suspended_at'),
  apiEnabled: integer('api_enabled', { mode: 'boolean' }).notNull().default(true),
  webhooksEnabled: integer('webhooks_enabled', { mode: 'boolean' }).notNull().default(true),
  createdAt: integer('created_at').notNull(),
})

/** API keys are stored only as a SHA-256 hash; `prefix` is the first characters, kept for display. */
export const apiKeys = sqliteTable(
  'api_keys',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    hash: text('hash').notNull(),
    prefix: text('prefix').notNull(),
    createdAt: integer('created_at').notNull(),
    revokedAt: integer('revoked_at'),
  },
  (t) => [uniqueIndex('api_keys_hash').on(t.hash), index('api_keys_tenant').on(t.tenantId)]
)

/** One row per connected account. `id` is unique per tenant (the E.164 number for alpha, `custom` for the custom channel). */
export const accounts = sqliteTable(
  'accounts',
  {
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    id: text('id').notNull(),
    channel: text('channel', { enum: CHANNELS }).notNull(),
    identifier: text('identifier').notNull(),
    status: text('status', { enum: ACCOUNT_STATUSES }).notNull(),
    statusReason: text('status_reason'),
    connectedAt: integer('connected_at'),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.id] })]
)

/**
 * Per-account channel settings. `config` is AES-GCM ciphertext (worker/lib/crypto.ts) because it holds secrets
 * that must be read back: the custom channel's webhook URL carries the user's secret.
 */
export const channelConnections = sqliteTable(
  'channel_connections',
  {
    tenantId: text('tenant_id').notNull(),
    accountId: text('account_id').notNull(),
    kind: text('kind').notNull(),
    config: text('config').notNull(),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.accountId] })]
)

/** A person on one account. Ids are derived from the address (worker/lib/ids.ts), so creation is idempotent. */
export const contacts = sqliteTable(
  'contacts',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id').notNull(),
    accountId: text('account_id').notNull(),
    channel: text('channel', { enum: CHANNELS }).notNull(),
    phone: text('phone'),
    externalId: text('external_id'),
    socialId: text('social_id'),
    /** alpha/beta: the upstream's stable peer id (alpha: the LID when known, else the phone JID), used to address replies. */
    peerId: text('peer_id'),
    name: text('name'),
    firstName: text('first_name'),
    lastName: text('last_name'),
    email: text('email'),
    doNotDisturb: integer('do_not_disturb', { mode: 'boolean' }).notNull().default(false),
    optedOut: integer('opted_out', { mode: 'boolean' }).notNull().default(false),
    private: integer('private', { mode: 'boolean' }).notNull().default(false),
    aiPaused: integer('ai_paused', { mode: 'boolean' }).notNull().default(false),
    firstInboundAt: integer('first_inbound_at'),
    lastInboundAt: integer('last_inbound_at'),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (t) => [index('contacts_account').on(t.tenantId, t.accountId)]
)

/**
 * Messages in both directions. `seq` is the global insertion order: D1 has one writer, so the committed seqs are
 * always a gap-free prefix, which is what makes the list and wait cursors safe (no skips, no repeats).
 */
export const messages = sqliteTable(
  'messages',
  {
    seq: integer('seq').primaryKey({ autoIncrement: true }),
    id: text('id').notNull(),
    tenantId: text('tenant_id').notNull(),
    accountId: text('account_id').notNull(),
    contactId: text('contact_id').notNull(),
    direction: text('direction', { enum: ['inbound', 'outbound'] }).notNull(),
    text: text('text').notNull(),
    mediaUrl: text('media_url'),
    mediaContentType: text('media_content_type'),
    status: text('status', { enum: MESSAGE_STATUSES }).notNull(),
    errorCode: integer('error_code'),
    errorMessage: text('error_message'),
    /** The upstream's id: the custom channel's messageSid, the alpha message key id. De-duplicates re-sent inbound. */
    upstreamId: text('upstream_id'),
    attempts: integer('attempts').notNull().default(0),
    lastAttemptAt: integer('last_attempt_at'),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (t) => [
    uniqueIndex('messages_id').on(t.id),
    uniqueIndex('messages_upstream').on(t.tenantId, t.accountId, t.direction, t.upstreamId),
    index('messages_tenant_seq').on(t.tenantId, t.seq),
    index('messages_account_seq').on(t.tenantId, t.accountId, t.seq),
    index('messages_queued')
      .on(t.tenantId, t.accountId, t.status)
      .where(sql`status = 'queued'`),
  ]
)

/**
 * The event outbox: written in the same D1 batch as the change that caused it, so an event exists exactly when
 * its change committed. `dispatchedAt` is set once webhook fan-out has picked it up (worker/webhooks).
 */
export const events = sqliteTable(
  'events',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id').notNull(),
    /** The account whose Durable Object emitted it (also for account.limit_reached, whose payload hides it). */
    accountId: text('account_id').notNull(),
    type: text('type').notNull(),
    payload: text('payload').notNull(),
    createdAt: integer('created_at').notNull(),
    dispatchedAt: integer('dispatched_at'),
  },
  (t) => [
    index('events_tenant_created').on(t.tenantId, t.createdAt),
    index('events_pending')
      .on(t.tenantId, t.accountId, t.createdAt)
      .where(sql`dispatched_at is null`),
  ]
)

/**
 * Relay tokens (admin API): a relay authenticates its WebSocket with one. Stored only as a SHA-256 hash. A token
 * scoped to a tenant (`tenantId` set) only ever receives that tenant's accounts; without it, the service's relays
 * serve every tenant that has no relay of its own.
 */
export const relays = sqliteTable(
  'relays',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id').references(() => tenants.id),
    name: text('name'),
    hash: text('hash').notNull(),
    prefix: text('prefix').notNull(),
    createdAt: integer('created_at').notNull(),
    revokedAt: integer('revoked_at'),
  },
  (t) => [uniqueIndex('relays_hash').on(t.hash), index('relays_tenant').on(t.tenantId)]
)
