-- MCP events (SEP-3415, docs/mcp.md). Events get `seq`, their commit order (D1 has one writer; AUTOINCREMENT never
-- reuses a number), which MCP event cursors name; SQLite cannot add a primary key in place, so the table is rebuilt
-- with the existing rows numbered in their insertion order. Webhook subscriptions learn where they came from
-- (`origin`), which events they take (`filter`), the key that made an MCP subscription (`key_id`) and when it
-- lapses unless refreshed (`expires_at`).
-- Written by hand: the drizzle-kit snapshots stop at 0003, so `npm run db:generate` would rewrite every later table.
CREATE TABLE `__new_events` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`id` text NOT NULL,
	`tenant_id` text NOT NULL,
	`account_id` text NOT NULL,
	`type` text NOT NULL,
	`payload` text NOT NULL,
	`created_at` integer NOT NULL,
	`dispatched_at` integer
);
--> statement-breakpoint
INSERT INTO `__new_events` (`id`, `tenant_id`, `account_id`, `type`, `payload`, `created_at`, `dispatched_at`)
	SELECT `id`, `tenant_id`, `account_id`, `type`, `payload`, `created_at`, `dispatched_at` FROM `events` ORDER BY `rowid`;
--> statement-breakpoint
DROP TABLE `events`;
--> statement-breakpoint
ALTER TABLE `__new_events` RENAME TO `events`;
--> statement-breakpoint
CREATE UNIQUE INDEX `events_id` ON `events` (`id`);--> statement-breakpoint
CREATE INDEX `events_tenant_seq` ON `events` (`tenant_id`,`seq`);--> statement-breakpoint
CREATE INDEX `events_tenant_created` ON `events` (`tenant_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `events_pending` ON `events` (`tenant_id`,`account_id`,`created_at`) WHERE dispatched_at is null;--> statement-breakpoint
CREATE INDEX `events_created` ON `events` (`created_at`);--> statement-breakpoint
ALTER TABLE `webhooks` ADD `origin` text DEFAULT 'rest' NOT NULL;--> statement-breakpoint
ALTER TABLE `webhooks` ADD `filter` text;--> statement-breakpoint
ALTER TABLE `webhooks` ADD `key_id` text;--> statement-breakpoint
ALTER TABLE `webhooks` ADD `expires_at` integer;
