-- Issue 22 item 4, shards: a tenant's rows live on one of the bound databases DB_SHARD_0..N-1, the directory (DB,
-- which is also shard 0) says which (docs/ARCHITECTURE.md, "The data tier"). Every database gets this same migration
-- set: shard 0 is the directory's own database, so it needs every table anyway, and one set keeps wrangler's
-- migration log the same everywhere; a directory table stays empty on the other shards (one page each).
-- Written by hand, like 0013-0015.
ALTER TABLE `tenants` ADD `shard` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `tenants` ADD `placement` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `tenants` ADD `moving_to` integer;--> statement-breakpoint
CREATE INDEX `tenants_shard` ON `tenants` (`shard`);--> statement-breakpoint
-- A move pages through a tenant's rows by rowid (worker/db/move-rows.ts); these two tables had no index led by the tenant.
CREATE INDEX `contacts_tenant` ON `contacts` (`tenant_id`);--> statement-breakpoint
CREATE INDEX `message_approvals_tenant` ON `message_approvals` (`tenant_id`);--> statement-breakpoint
-- How a moved tenant's sequence numbers map from its previous placement (worker/db/cursor-maps.ts).
CREATE TABLE `cursor_maps` (
	`tenant_id` text NOT NULL,
	`kind` text NOT NULL,
	`placement` integer NOT NULL,
	`old_first` integer NOT NULL,
	`old_last` integer NOT NULL,
	`delta` integer NOT NULL,
	PRIMARY KEY(`tenant_id`, `kind`, `placement`, `old_first`)
);--> statement-breakpoint
CREATE TABLE `tenant_fences` (
	`tenant_id` text PRIMARY KEY NOT NULL,
	`state` text NOT NULL,
	`move_id` text NOT NULL,
	`at` integer NOT NULL
);--> statement-breakpoint
-- An MCP subscription stopped taking deliveries when its key was revoked by a join with api_keys, a directory table
-- the other shards do not hold: revoking a key now ends its subscriptions on the tenant's shard (db/webhooks.ts
-- expireKeySubscriptions). Subscriptions of keys revoked before this migration end at the revocation.
UPDATE `webhooks` SET `expires_at` = (SELECT `revoked_at` FROM `api_keys` WHERE `api_keys`.`id` = `webhooks`.`key_id`)
WHERE `key_id` IS NOT NULL
  AND EXISTS (SELECT 1 FROM `api_keys` WHERE `api_keys`.`id` = `webhooks`.`key_id` AND `api_keys`.`revoked_at` IS NOT NULL
    AND (`webhooks`.`expires_at` IS NULL OR `webhooks`.`expires_at` > `api_keys`.`revoked_at`));--> statement-breakpoint
-- The move's fence (schema/d1.ts tenant_fences): while a tenant is `leaving` a shard, no insert, update or delete of its
-- rows there commits; once it `left`, no insert or update (the move deletes the old rows). The statement fails with
-- `tenant_moving`, which a request answers 503 temporarily_unavailable with Retry-After (worker/errors.ts). One
-- lookup in a table that is empty but for moving tenants, per row written.
CREATE TRIGGER `accounts_fence_insert` BEFORE INSERT ON `accounts`
WHEN EXISTS (SELECT 1 FROM `tenant_fences` WHERE `tenant_id` = NEW.`tenant_id` AND `state` IN ('leaving', 'left'))
BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;--> statement-breakpoint
CREATE TRIGGER `accounts_fence_update` BEFORE UPDATE ON `accounts`
WHEN EXISTS (SELECT 1 FROM `tenant_fences` WHERE `tenant_id` = NEW.`tenant_id` AND `state` IN ('leaving', 'left'))
BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;--> statement-breakpoint
CREATE TRIGGER `accounts_fence_delete` BEFORE DELETE ON `accounts`
WHEN EXISTS (SELECT 1 FROM `tenant_fences` WHERE `tenant_id` = OLD.`tenant_id` AND `state` IN ('leaving'))
BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;--> statement-breakpoint
CREATE TRIGGER `channel_connections_fence_insert` BEFORE INSERT ON `channel_connections`
WHEN EXISTS (SELECT 1 FROM `tenant_fences` WHERE `tenant_id` = NEW.`tenant_id` AND `state` IN ('leaving', 'left'))
BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;--> statement-breakpoint
CREATE TRIGGER `channel_connections_fence_update` BEFORE UPDATE ON `channel_connections`
WHEN EXISTS (SELECT 1 FROM `tenant_fences` WHERE `tenant_id` = NEW.`tenant_id` AND `state` IN ('leaving', 'left'))
BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;--> statement-breakpoint
CREATE TRIGGER `channel_connections_fence_delete` BEFORE DELETE ON `channel_connections`
WHEN EXISTS (SELECT 1 FROM `tenant_fences` WHERE `tenant_id` = OLD.`tenant_id` AND `state` IN ('leaving'))
BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;--> statement-breakpoint
CREATE TRIGGER `contacts_fence_insert` BEFORE INSERT ON `contacts`
WHEN EXISTS (SELECT 1 FROM `tenant_fences` WHERE `tenant_id` = NEW.`tenant_id` AND `state` IN ('leaving', 'left'))
BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;--> statement-breakpoint
CREATE TRIGGER `contacts_fence_update` BEFORE UPDATE ON `contacts`
WHEN EXISTS (SELECT 1 FROM `tenant_fences` WHERE `tenant_id` = NEW.`tenant_id` AND `state` IN ('leaving', 'left'))
BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;--> statement-breakpoint
CREATE TRIGGER `contacts_fence_delete` BEFORE DELETE ON `contacts`
WHEN EXISTS (SELECT 1 FROM `tenant_fences` WHERE `tenant_id` = OLD.`tenant_id` AND `state` IN ('leaving'))
BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;--> statement-breakpoint
CREATE TRIGGER `messages_fence_insert` BEFORE INSERT ON `messages`
WHEN EXISTS (SELECT 1 FROM `tenant_fences` WHERE `tenant_id` = NEW.`tenant_id` AND `state` IN ('leaving', 'left'))
BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;--> statement-breakpoint
CREATE TRIGGER `messages_fence_update` BEFORE UPDATE ON `messages`
WHEN EXISTS (SELECT 1 FROM `tenant_fences` WHERE `tenant_id` = NEW.`tenant_id` AND `state` IN ('leaving', 'left'))
BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;--> statement-breakpoint
CREATE TRIGGER `messages_fence_delete` BEFORE DELETE ON `messages`
WHEN EXISTS (SELECT 1 FROM `tenant_fences` WHERE `tenant_id` = OLD.`tenant_id` AND `state` IN ('leaving'))
BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;--> statement-breakpoint
CREATE TRIGGER `events_fence_insert` BEFORE INSERT ON `events`
WHEN EXISTS (SELECT 1 FROM `tenant_fences` WHERE `tenant_id` = NEW.`tenant_id` AND `state` IN ('leaving', 'left'))
BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;--> statement-breakpoint
CREATE TRIGGER `events_fence_update` BEFORE UPDATE ON `events`
WHEN EXISTS (SELECT 1 FROM `tenant_fences` WHERE `tenant_id` = NEW.`tenant_id` AND `state` IN ('leaving', 'left'))
BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;--> statement-breakpoint
CREATE TRIGGER `events_fence_delete` BEFORE DELETE ON `events`
WHEN EXISTS (SELECT 1 FROM `tenant_fences` WHERE `tenant_id` = OLD.`tenant_id` AND `state` IN ('leaving'))
BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;--> statement-breakpoint
CREATE TRIGGER `webhooks_fence_insert` BEFORE INSERT ON `webhooks`
WHEN EXISTS (SELECT 1 FROM `tenant_fences` WHERE `tenant_id` = NEW.`tenant_id` AND `state` IN ('leaving', 'left'))
BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;--> statement-breakpoint
CREATE TRIGGER `webhooks_fence_update` BEFORE UPDATE ON `webhooks`
WHEN EXISTS (SELECT 1 FROM `tenant_fences` WHERE `tenant_id` = NEW.`tenant_id` AND `state` IN ('leaving', 'left'))
BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;--> statement-breakpoint
CREATE TRIGGER `webhooks_fence_delete` BEFORE DELETE ON `webhooks`
WHEN EXISTS (SELECT 1 FROM `tenant_fences` WHERE `tenant_id` = OLD.`tenant_id` AND `state` IN ('leaving'))
BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;--> statement-breakpoint
CREATE TRIGGER `webhook_health_fence_insert` BEFORE INSERT ON `webhook_health`
WHEN EXISTS (SELECT 1 FROM `tenant_fences` WHERE `tenant_id` = NEW.`tenant_id` AND `state` IN ('leaving', 'left'))
BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;--> statement-breakpoint
CREATE TRIGGER `webhook_health_fence_update` BEFORE UPDATE ON `webhook_health`
WHEN EXISTS (SELECT 1 FROM `tenant_fences` WHERE `tenant_id` = NEW.`tenant_id` AND `state` IN ('leaving', 'left'))
BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;--> statement-breakpoint
CREATE TRIGGER `webhook_health_fence_delete` BEFORE DELETE ON `webhook_health`
WHEN EXISTS (SELECT 1 FROM `tenant_fences` WHERE `tenant_id` = OLD.`tenant_id` AND `state` IN ('leaving'))
BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;--> statement-breakpoint
CREATE TRIGGER `webhook_deliveries_fence_insert` BEFORE INSERT ON `webhook_deliveries`
WHEN EXISTS (SELECT 1 FROM `tenant_fences` WHERE `tenant_id` = NEW.`tenant_id` AND `state` IN ('leaving', 'left'))
BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;--> statement-breakpoint
CREATE TRIGGER `webhook_deliveries_fence_update` BEFORE UPDATE ON `webhook_deliveries`
WHEN EXISTS (SELECT 1 FROM `tenant_fences` WHERE `tenant_id` = NEW.`tenant_id` AND `state` IN ('leaving', 'left'))
BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;--> statement-breakpoint
CREATE TRIGGER `webhook_deliveries_fence_delete` BEFORE DELETE ON `webhook_deliveries`
WHEN EXISTS (SELECT 1 FROM `tenant_fences` WHERE `tenant_id` = OLD.`tenant_id` AND `state` IN ('leaving'))
BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;--> statement-breakpoint
CREATE TRIGGER `media_fence_insert` BEFORE INSERT ON `media`
WHEN EXISTS (SELECT 1 FROM `tenant_fences` WHERE `tenant_id` = NEW.`tenant_id` AND `state` IN ('leaving', 'left'))
BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;--> statement-breakpoint
CREATE TRIGGER `media_fence_update` BEFORE UPDATE ON `media`
WHEN EXISTS (SELECT 1 FROM `tenant_fences` WHERE `tenant_id` = NEW.`tenant_id` AND `state` IN ('leaving', 'left'))
BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;--> statement-breakpoint
CREATE TRIGGER `media_fence_delete` BEFORE DELETE ON `media`
WHEN EXISTS (SELECT 1 FROM `tenant_fences` WHERE `tenant_id` = OLD.`tenant_id` AND `state` IN ('leaving'))
BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;--> statement-breakpoint
CREATE TRIGGER `audit_log_fence_insert` BEFORE INSERT ON `audit_log`
WHEN EXISTS (SELECT 1 FROM `tenant_fences` WHERE `tenant_id` = NEW.`tenant_id` AND `state` IN ('leaving', 'left'))
BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;--> statement-breakpoint
CREATE TRIGGER `audit_log_fence_update` BEFORE UPDATE ON `audit_log`
WHEN EXISTS (SELECT 1 FROM `tenant_fences` WHERE `tenant_id` = NEW.`tenant_id` AND `state` IN ('leaving', 'left'))
BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;--> statement-breakpoint
CREATE TRIGGER `audit_log_fence_delete` BEFORE DELETE ON `audit_log`
WHEN EXISTS (SELECT 1 FROM `tenant_fences` WHERE `tenant_id` = OLD.`tenant_id` AND `state` IN ('leaving'))
BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;--> statement-breakpoint
CREATE TRIGGER `message_approvals_fence_insert` BEFORE INSERT ON `message_approvals`
WHEN EXISTS (SELECT 1 FROM `tenant_fences` WHERE `tenant_id` = NEW.`tenant_id` AND `state` IN ('leaving', 'left'))
BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;--> statement-breakpoint
CREATE TRIGGER `message_approvals_fence_update` BEFORE UPDATE ON `message_approvals`
WHEN EXISTS (SELECT 1 FROM `tenant_fences` WHERE `tenant_id` = NEW.`tenant_id` AND `state` IN ('leaving', 'left'))
BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;--> statement-breakpoint
CREATE TRIGGER `message_approvals_fence_delete` BEFORE DELETE ON `message_approvals`
WHEN EXISTS (SELECT 1 FROM `tenant_fences` WHERE `tenant_id` = OLD.`tenant_id` AND `state` IN ('leaving'))
BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;--> statement-breakpoint
CREATE TRIGGER `social_pages_fence_insert` BEFORE INSERT ON `social_pages`
WHEN EXISTS (SELECT 1 FROM `tenant_fences` WHERE `tenant_id` = NEW.`tenant_id` AND `state` IN ('leaving', 'left'))
BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;--> statement-breakpoint
CREATE TRIGGER `social_pages_fence_update` BEFORE UPDATE ON `social_pages`
WHEN EXISTS (SELECT 1 FROM `tenant_fences` WHERE `tenant_id` = NEW.`tenant_id` AND `state` IN ('leaving', 'left'))
BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;--> statement-breakpoint
CREATE TRIGGER `social_pages_fence_delete` BEFORE DELETE ON `social_pages`
WHEN EXISTS (SELECT 1 FROM `tenant_fences` WHERE `tenant_id` = OLD.`tenant_id` AND `state` IN ('leaving'))
BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;--> statement-breakpoint
CREATE TRIGGER `idempotency_keys_fence_insert` BEFORE INSERT ON `idempotency_keys`
WHEN EXISTS (SELECT 1 FROM `tenant_fences` WHERE `tenant_id` = NEW.`tenant_id` AND `state` IN ('leaving', 'left'))
BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;--> statement-breakpoint
CREATE TRIGGER `idempotency_keys_fence_update` BEFORE UPDATE ON `idempotency_keys`
WHEN EXISTS (SELECT 1 FROM `tenant_fences` WHERE `tenant_id` = NEW.`tenant_id` AND `state` IN ('leaving', 'left'))
BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;--> statement-breakpoint
CREATE TRIGGER `idempotency_keys_fence_delete` BEFORE DELETE ON `idempotency_keys`
WHEN EXISTS (SELECT 1 FROM `tenant_fences` WHERE `tenant_id` = OLD.`tenant_id` AND `state` IN ('leaving'))
BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;--> statement-breakpoint
CREATE TRIGGER `social_flows_fence_insert` BEFORE INSERT ON `social_flows`
WHEN EXISTS (SELECT 1 FROM `tenant_fences` WHERE `tenant_id` = NEW.`tenant_id` AND `state` IN ('leaving', 'left'))
BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;--> statement-breakpoint
CREATE TRIGGER `social_flows_fence_update` BEFORE UPDATE ON `social_flows`
WHEN EXISTS (SELECT 1 FROM `tenant_fences` WHERE `tenant_id` = NEW.`tenant_id` AND `state` IN ('leaving', 'left'))
BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;--> statement-breakpoint
CREATE TRIGGER `social_flows_fence_delete` BEFORE DELETE ON `social_flows`
WHEN EXISTS (SELECT 1 FROM `tenant_fences` WHERE `tenant_id` = OLD.`tenant_id` AND `state` IN ('leaving'))
BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;
