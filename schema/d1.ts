/**
 * D1 tables (Drizzle): the system of record for tenants, keys, accounts, contacts, messages and events.
 * Migrations are generated from this file by drizzle-kit into schema/migrations and applied by wrangler.
 * Times are Unix epoch milliseconds in plain integer columns.
 */
import { sql } from 'drizzle-orm'
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core'
import { MEDIA_KINDS } from './frames'

export const CHANNELS = ['alpha_web', 'beta', 'sms', 'social', 'custom'] as const
export type Channel = (typeof CHANNELS)[number]

export const ACCOUNT_STATUSES = ['connected', 'connecting', 'disconnected', 'restricted'] as const
export type AccountStatus = (typeof ACCOUNT_STATUSES)[number]

/** `awaiting_approval` extends spec §3: a send held for the owner's approval (docs/agent-safety.md). */
export const MESSAGE_STATUSES = ['queued', 'sent', 'delivered', 'read', 'failed', 'received', 'awaiting_approval'] as const
export type MessageStatus = (typeof MESSAGE_STATUSES)[number]

export { MEDIA_KINDS }
export type MediaKind = (typeof MEDIA_KINDS)[number]

export const tenants = sqliteTable(
  'tenants',
  {
    id: text('id').primaryKey(),
    plan: text('plan').notNull(),
    status: text('status', { enum: ['active', 'suspended'] })
      .notNull()
      .default('active'),
    suspendedReason: text('suspended_reason'),
    suspendedAt: integer('suspended_at'),
    apiEnabled: integer('api_enabled', { mode: 'boolean' }).notNull().default(true),
    webhooksEnabled: integer('webhooks_enabled', { mode: 'boolean' }).notNull().default(true),
    createdAt: integer('created_at').notNull(),
    /**
     * Days messages are kept (docs/api.md, "Retention and archive"): null is the service default (DEFAULT_MESSAGE_RETENTION_DAYS), 0 keeps
     * them forever; only the admin API sets it.
     */
    messageRetentionDays: integer('message_retention_days'),
    /** When the retention sweep last finished this tenant; the sweep takes the tenants it visited longest ago first. */
    retentionCheckedAt: integer('retention_checked_at').notNull().default(0),
    /** The shard (DB_SHARD_<n>) holding the tenant's rows (docs/ARCHITECTURE.md, "The data tier"). */
    shard: integer('shard').notNull().default(0),
    /**
     * How many times the tenant moved: the placement its cursors were issued in. A cursor of an earlier placement is
     * translated through the tenant's `cursor_maps` (worker/db/cursor-maps.ts).
     */
    placement: integer('placement').notNull().default(0),
    /** The shard a running move copies the tenant to; null when no move runs. */
    movingTo: integer('moving_to'),
    /**
     * alpha: the relay may complete the phone's passkey ceremony when linking (docs/channels/alpha.md). Off by default:
     * a malformed pairing IQ can get a number banned, so an admin turns it on per tenant.
     */
    alphaPasskeyLinking: integer('alpha_passkey_linking', { mode: 'boolean' }).notNull().default(false),
  },
  (t) => [index('tenants_retention_due').on(t.retentionCheckedAt), index('tenants_shard').on(t.shard)]
)

/** What a key may do (docs/agent-safety.md): `full` is every operation, `reply` reads and answers, `read` only reads. */
export const KEY_SCOPES = ['read', 'reply', 'full'] as const
export type KeyScope = (typeof KEY_SCOPES)[number]

/**
 * API keys are stored only as a SHA-256 hash; `prefix` is the first characters, kept for display. The scope columns
 * narrow what a key may do; their defaults are today's key (full, every account, no expiry, no approval).
 */
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
    scope: text('scope', { enum: KEY_SCOPES }).notNull().default('full'),
    label: text('label'),
    /** JSON array of account ids the key may use; null: every account of the tenant. */
    accounts: text('accounts'),
    expiresAt: integer('expires_at'),
    /** `reply` keys: how long after a person's last message they may still be answered. */
    replyWindowS: integer('reply_window_s'),
    /** Sends to people who never wrote are held for the owner's approval. */
    approval: integer('approval', { mode: 'boolean' }).notNull().default(false),
    /** The key that minted this one (null: issued by the admin API). */
    parentId: text('parent_id'),
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
    /** beta: the person's public @username (without the @), when they have one. */
    username: text('username'),
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
  // Phone last: the prefix serves every per-account query, the whole key the lookups of a number (sends to new numbers, inbound from new people).
  // The tenant alone: a move pages through a tenant's contacts in rowid order (worker/db/move-rows.ts).
  (t) => [index('contacts_account_phone').on(t.tenantId, t.accountId, t.phone), index('contacts_tenant').on(t.tenantId)]
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
    /** Media kept in the media store (worker/media/): its id, kind, size and original name; null for link-only media. */
    mediaId: text('media_id'),
    mediaKind: text('media_kind', { enum: MEDIA_KINDS }),
    mediaSize: integer('media_size'),
    mediaFileName: text('media_file_name'),
    /** Why the item is not stored (over the size cap, or the provider's copy could not be fetched); null when it is. */
    mediaError: text('media_error'),
    /** `stored`, `too_large` or `unavailable` (a provider's URL that could not be fetched); null on rows from before it (mediaError says too_large). */
    mediaStatus: text('media_status', { enum: ['stored', 'too_large', 'unavailable'] }),
    status: text('status', { enum: MESSAGE_STATUSES }).notNull(),
    errorCode: integer('error_code'),
    errorMessage: text('error_message'),
    /** The upstream's id: the custom channel's messageSid, the alpha message key id. De-duplicates re-sent inbound. */
    upstreamId: text('upstream_id'),
    /**
     * The message this one quotes (issue 25): our message id when the quoted message is stored, else the upstream's id
     * for it (an inbound reply to something we never saw); null when it is not a reply.
     */
    replyTo: text('reply_to'),
    /** JSON array of `{emoji, from, at}` (schema/api/messages.ts `Reaction`), one per sender; null when there are none. */
    reactions: text('reactions'),
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
    index('messages_queued').on(t.tenantId, t.accountId, t.status).where(sql`status = 'queued'`),
    // Outbound rows only (sends are capped per account and day, so these stay small): an outbound list, a person's
    // sent messages (a read watermark) and whether any message was sent to a contact (retention) are found without
    // walking past the inbound history.
    index('messages_outbound').on(t.tenantId, t.accountId, t.seq).where(sql`direction = 'outbound'`),
    index('messages_outbound_tenant').on(t.tenantId, t.seq).where(sql`direction = 'outbound'`),
    index('messages_outbound_contact').on(t.tenantId, t.accountId, t.contactId, t.createdAt).where(sql`direction = 'outbound'`),
  ]
)

/**
 * Per-account message figures kept by SQLite triggers on `messages` (schema/migrations, the `account_stats`
 * migration): every insert counts and moves the last inbound/outbound time, every delete (retention) uncounts, in
 * the same statement, so the status answers read one row instead of the history, and no code path can forget it.
 * Kept when the account is removed, like its messages.
 */
export const accountStats = sqliteTable(
  'account_stats',
  {
    tenantId: text('tenant_id').notNull(),
    accountId: text('account_id').notNull(),
    messageCount: integer('message_count').notNull().default(0),
    lastInboundAt: integer('last_inbound_at'),
    lastOutboundAt: integer('last_outbound_at'),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.accountId] })]
)

/**
 * The event outbox: written in the same D1 batch as the change that caused it, so an event exists exactly when
 * its change committed. `dispatchedAt` is set once webhook fan-out has picked it up (worker/webhooks). `seq` is the
 * commit order (D1 has one writer, and AUTOINCREMENT never reuses a number): the position an MCP events cursor
 * names (worker/mcp/events), so a reader resuming after `seq` neither skips nor repeats an event.
 */
export const events = sqliteTable(
  'events',
  {
    seq: integer('seq').primaryKey({ autoIncrement: true }),
    id: text('id').notNull(),
    tenantId: text('tenant_id').notNull(),
    /** The account whose Durable Object emitted it (also for account.limit_reached, whose payload hides it). */
    accountId: text('account_id').notNull(),
    type: text('type').notNull(),
    payload: text('payload').notNull(),
    createdAt: integer('created_at').notNull(),
    dispatchedAt: integer('dispatched_at'),
  },
  (t) => [
    uniqueIndex('events_id').on(t.id),
    index('events_tenant_seq').on(t.tenantId, t.seq),
    index('events_tenant_created').on(t.tenantId, t.createdAt),
    index('events_pending').on(t.tenantId, t.accountId, t.createdAt).where(sql`dispatched_at is null`),
    // The retention sweep deletes by age across tenants (worker/webhooks/sweeper.ts).
    index('events_created').on(t.createdAt),
  ]
)

export const WEBHOOK_ORIGINS = ['rest', 'mcp'] as const
export type WebhookOrigin = (typeof WEBHOOK_ORIGINS)[number]

/**
 * Webhook subscriptions (spec 2, `WebhookSubscription`). `id` is internal and stable; the API's `id` is the
 * subscription's position in the tenant's list (ordered by `createdAt`, then `id`). The signing secret is sealed
 * with AES-GCM (worker/lib/crypto.ts) because deliveries must read it back. Subscriptions made with MCP
 * `events/subscribe` (origin `mcp`) live here too, so they ride the same outbox: their id is derived from the
 * subscription key, `filter` narrows the events they get, `keyId` is the key (principal) that made them, and
 * `expiresAt` ends their deliveries unless the client refreshes them.
 */
export const webhooks = sqliteTable(
  'webhooks',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id').notNull(),
    name: text('name').notNull(),
    url: text('url').notNull(),
    /** JSON array of event names. */
    subscribedTo: text('subscribed_to').notNull(),
    enabled: integer('enabled', { mode: 'boolean' }).notNull().default(true),
    retriesEnabled: integer('retries_enabled', { mode: 'boolean' }).notNull().default(false),
    signingSecret: text('signing_secret'),
    signingSecretCreatedAt: integer('signing_secret_created_at'),
    /**
     * The owner's key (or the admin) created or last saved it: only such a subscription receives
     * `message.approval_required`, whose links decide a held message (docs/agent-safety.md).
     */
    ownerConfigured: integer('owner_configured', { mode: 'boolean' }).notNull().default(false),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
    origin: text('origin', { enum: WEBHOOK_ORIGINS }).notNull().default('rest'),
    /** JSON object (db/event-filter.ts `EventFilter`): only events passing it are delivered; null: every event. */
    filter: text('filter'),
    keyId: text('key_id'),
    expiresAt: integer('expires_at'),
  },
  (t) => [uniqueIndex('webhooks_tenant_name').on(t.tenantId, t.name), index('webhooks_tenant_created').on(t.tenantId, t.createdAt)]
)

/**
 * Delivery health per URL (spec 2, `WebhookHealthStatus`), shared by every subscription of the tenant that points
 * there. Several Durable Objects deliver to one URL, so every change is one atomic SQL upsert
 * (worker/db/webhook-health.ts). `failingSince` is when the current run of consecutive failures began: the
 * auto-pause rule needs its age.
 */
export const webhookHealth = sqliteTable(
  'webhook_health',
  {
    tenantId: text('tenant_id').notNull(),
    url: text('url').notNull(),
    consecutiveFailures: integer('consecutive_failures').notNull().default(0),
    totalFailures: integer('total_failures').notNull().default(0),
    totalSuccesses: integer('total_successes').notNull().default(0),
    failingSince: integer('failing_since'),
    isDisabled: integer('is_disabled', { mode: 'boolean' }).notNull().default(false),
    disabledAt: integer('disabled_at'),
    disabledReason: text('disabled_reason'),
    lastFailureAt: integer('last_failure_at'),
    lastFailureStatus: integer('last_failure_status'),
    lastFailureType: text('last_failure_type', { enum: ['permanent', 'temporary', 'timeout', 'network', 'unknown'] }),
    lastFailureMessage: text('last_failure_message'),
    lastSuccessAt: integer('last_success_at'),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.url] })]
)

export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed', 'paused', 'skipped'] as const
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number]

/**
 * One row per (event, subscription): the delivery log (kept 7 days) and the retry outbox in one. The id is derived
 * from the pair (deliveryIdFor in worker/webhooks/signing.ts), so it is the same on every retry and every replay, and a second fan-out
 * of the same event inserts nothing. The owning AccountDO (`accountId`) keeps one alarm at the earliest due row.
 */
export const webhookDeliveries = sqliteTable(
  'webhook_deliveries',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id').notNull(),
    webhookId: text('webhook_id').notNull(),
    eventId: text('event_id').notNull(),
    eventType: text('event_type').notNull(),
    /** The Durable Object that owns the retries: the account that emitted the event. */
    accountId: text('account_id').notNull(),
    status: text('status', { enum: DELIVERY_STATUSES }).notNull(),
    attempts: integer('attempts').notNull().default(0),
    /** Attempts made before the current cycle (a replay starts a new one); the retry step is attempts - cycleStart. */
    cycleStart: integer('cycle_start').notNull().default(0),
    nextAttemptAt: integer('next_attempt_at'),
    /** Set while an attempt is in flight; an attempt interrupted by eviction is taken over once it lapses. */
    leaseUntil: integer('lease_until'),
    lastAttemptAt: integer('last_attempt_at'),
    lastStatusCode: integer('last_status_code'),
    lastFailureType: text('last_failure_type', { enum: ['permanent', 'temporary', 'timeout', 'network', 'unknown'] }),
    lastError: text('last_error'),
    deliveredAt: integer('delivered_at'),
    /** When the event happened (the log's order and the retention clock). */
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (t) => [
    index('webhook_deliveries_log').on(t.tenantId, t.webhookId, t.createdAt),
    index('webhook_deliveries_due').on(t.tenantId, t.accountId, t.nextAttemptAt).where(sql`status = 'pending'`),
    index('webhook_deliveries_overdue').on(t.nextAttemptAt).where(sql`status = 'pending'`),
    index('webhook_deliveries_created').on(t.createdAt),
  ]
)

/**
 * Replay calls per subscription (issue 14 §2): a row per call, `finished_at` null while it runs. At most one runs
 * per subscription and REPLAYS_PER_HOUR start per hour; rows older than an hour are pruned as new ones start.
 */
export const webhookReplays = sqliteTable(
  'webhook_replays',
  {
    id: text('id').primaryKey(),
    webhookId: text('webhook_id').notNull(),
    startedAt: integer('started_at').notNull(),
    finishedAt: integer('finished_at'),
  },
  (t) => [index('webhook_replays_by_webhook').on(t.webhookId, t.startedAt)]
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

/**
 * The page inbox's own registered app, one per tenant (spec 4.6 `set_social_app`). The App Secret is sealed with
 * AES-GCM because webhook signatures and token exchanges need it back. `webhookId` names the tenant's webhook
 * callback URL without revealing the tenant; `verifyToken` answers Graph's verification handshake.
 */
export const socialApps = sqliteTable(
  'social_apps',
  {
    tenantId: text('tenant_id').primaryKey(),
    webhookId: text('webhook_id').notNull(),
    appId: text('app_id').notNull(),
    configId: text('config_id').notNull(),
    secret: text('secret').notNull(),
    verifyToken: text('verify_token').notNull(),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (t) => [uniqueIndex('social_apps_webhook').on(t.webhookId)]
)

export const SOCIAL_FLOW_STATUSES = ['pending', 'pages_loaded', 'connected', 'failed'] as const

/**
 * One page-inbox connect flow (spec 3, page-inbox connection status): `pending` until the permission step returns,
 * `pages_loaded` with the user's pages (sealed: they hold Page tokens), `connected` once a page is picked, `failed`
 * with a reason. `expired` is not stored: it is a pending or pages_loaded flow past `expiresAt`. The OAuth `state`
 * is stored only as a hash and is spent on first use (`stateUsedAt`).
 */
export const socialFlows = sqliteTable(
  'social_flows',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id').notNull(),
    status: text('status', { enum: SOCIAL_FLOW_STATUSES }).notNull(),
    reason: text('reason'),
    stateHash: text('state_hash').notNull(),
    stateUsedAt: integer('state_used_at'),
    pages: text('pages'),
    accountId: text('account_id'),
    expiresAt: integer('expires_at').notNull(),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (t) => [uniqueIndex('social_flows_state').on(t.stateHash), index('social_flows_tenant').on(t.tenantId, t.createdAt)]
)

/**
 * A connected page (one `social` account per page, spec 8) and its linked Instagram professional account: two
 * surfaces of the same account. The Page token is sealed. Webhooks find the account by page id or Instagram id.
 */
export const socialPages = sqliteTable(
  'social_pages',
  {
    tenantId: text('tenant_id').notNull(),
    accountId: text('account_id').notNull(),
    pageId: text('page_id').notNull(),
    pageName: text('page_name').notNull(),
    instagramId: text('instagram_id'),
    instagramUsername: text('instagram_username'),
    token: text('token').notNull(),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.accountId] }), index('social_pages_page').on(t.pageId), index('social_pages_instagram').on(t.instagramId)]
)

/**
 * Objects in the media bucket (R2 key media/{tenant}/{account}/{id}), one row per item the relay uploaded or reported
 * over the size cap, or a provider URL the Worker fetched (worker/media/ingest-url.ts) or could not fetch (`unavailable`). The row is written after the object, so a row always names a whole object; retention and
 * account removal delete the object first, then the row.
 */
export const media = sqliteTable(
  'media',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id').notNull(),
    accountId: text('account_id').notNull(),
    kind: text('kind', { enum: MEDIA_KINDS }).notNull(),
    contentType: text('content_type').notNull(),
    size: integer('size').notNull(),
    fileName: text('file_name'),
    status: text('status', { enum: ['stored', 'too_large', 'unavailable'] }).notNull(),
    reason: text('reason'),
    createdAt: integer('created_at').notNull(),
  },
  (t) => [index('media_account').on(t.tenantId, t.accountId), index('media_created').on(t.createdAt)]
)

/**
 * The audit log (docs/agent-safety.md): one row per action taken with a key. Never holds a message text. Kept
 * AUDIT_RETENTION_MS by the cron, which deletes by age across tenants without touching any account.
 */
export const AUDIT_OUTCOMES = ['accepted', 'refused', 'approved', 'rejected'] as const
export type AuditOutcome = (typeof AUDIT_OUTCOMES)[number]

export const auditLog = sqliteTable(
  'audit_log',
  {
    seq: integer('seq').primaryKey({ autoIncrement: true }),
    tenantId: text('tenant_id').notNull(),
    keyId: text('key_id'),
    keyLabel: text('key_label'),
    /** `POST /v1/messages` for REST, `send_message` for a tool call, `approval page` for the hosted page. */
    action: text('action').notNull(),
    route: text('route').notNull(),
    accountId: text('account_id'),
    contactId: text('contact_id'),
    messageId: text('message_id'),
    outcome: text('outcome', { enum: AUDIT_OUTCOMES }).notNull(),
    code: text('code'),
    status: integer('status').notNull(),
    createdAt: integer('created_at').notNull(),
  },
  (t) => [index('audit_tenant_seq').on(t.tenantId, t.seq), index('audit_created').on(t.createdAt)]
)

/** Sends held for the owner's approval (status `awaiting_approval`): who held them and until when the link works. */
export const messageApprovals = sqliteTable(
  'message_approvals',
  {
    messageId: text('message_id').primaryKey(),
    tenantId: text('tenant_id').notNull(),
    accountId: text('account_id').notNull(),
    keyId: text('key_id').notNull(),
    expiresAt: integer('expires_at').notNull(),
    decidedAt: integer('decided_at'),
    decision: text('decision', { enum: ['approved', 'rejected', 'expired'] }),
    createdAt: integer('created_at').notNull(),
  },
  (t) => [index('message_approvals_open').on(t.expiresAt).where(sql`decided_at is null`), index('message_approvals_tenant').on(t.tenantId)]
)

/**
 * Shards only. How the sequence numbers of a tenant's rows changed when it moved here (worker/db/cursor-maps.ts): the
 * rows of one copy batch, whose old numbers run from `oldFirst` to `oldLast`, were stored at old + `delta`, in
 * order, so a cursor of the previous placement names the same place after the move. One row per batch and table;
 * they move with the tenant.
 */
export const CURSOR_KINDS = ['messages', 'events', 'audit'] as const
export type CursorMapKind = (typeof CURSOR_KINDS)[number]

export const cursorMaps = sqliteTable(
  'cursor_maps',
  {
    tenantId: text('tenant_id').notNull(),
    kind: text('kind', { enum: CURSOR_KINDS }).notNull(),
    /** The placement these numbers lead into (tenants.placement after the move). */
    placement: integer('placement').notNull(),
    oldFirst: integer('old_first').notNull(),
    oldLast: integer('old_last').notNull(),
    delta: integer('delta').notNull(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.kind, t.placement, t.oldFirst] })]
)

export const FENCE_STATES = ['leaving', 'left', 'arriving'] as const
export type FenceState = (typeof FENCE_STATES)[number]

/**
 * Shards only. A tenant being moved (worker/shards/): `leaving` on the shard it leaves refuses every insert, update
 * and delete of its rows there (triggers in schema/migrations, the shards migration), `left` keeps refusing inserts
 * and updates once it moved (deletes are the move clearing the old rows), `arriving` on the shard it goes to keeps
 * the cron's age-based pruning off the rows being copied. The triggers make a write that would be lost refuse
 * instead, whatever stale placement its writer holds.
 */
export const tenantFences = sqliteTable('tenant_fences', {
  tenantId: text('tenant_id').primaryKey(),
  state: text('state', { enum: FENCE_STATES }).notNull(),
  moveId: text('move_id').notNull(),
  at: integer('at').notNull(),
})

/**
 * Idempotency keys (docs/idempotency.md): the first answer to a creating POST sent with `Idempotency-Key`, kept
 * IDEMPOTENCY_TTL_MS per tenant and key so a retry gets it again instead of acting twice. `status` and `response`
 * stay null while the first request runs (`locked_until` bounds how long a request that died holds the key);
 * `response` is the answer's headers and body, sealed (it may hold a signing secret). The key itself is kept as a
 * SHA-256 hash (`key_hash`), `fingerprint` hashes the request (method, path, key id, canonical body).
 */
export const idempotencyKeys = sqliteTable(
  'idempotency_keys',
  {
    tenantId: text('tenant_id').notNull(),
    keyHash: text('key_hash').notNull(),
    fingerprint: text('fingerprint').notNull(),
    /** Which request holds the key: a retry compares it with its own to know it is not the first. */
    claim: text('claim').notNull(),
    status: integer('status'),
    response: text('response'),
    lockedUntil: integer('locked_until'),
    expiresAt: integer('expires_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.keyHash] }), index('idempotency_keys_expires').on(t.expiresAt)]
)
