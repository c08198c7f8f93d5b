CREATE TABLE `webhook_deliveries` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`webhook_id` text NOT NULL,
	`event_id` text NOT NULL,
	`event_type` text NOT NULL,
	`account_id` text NOT NULL,
	`status` text NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`cycle_start` integer DEFAULT 0 NOT NULL,
	`next_attempt_at` integer,
	`lease_until` integer,
	`last_attempt_at` integer,
	`last_status_code` integer,
	`last_failure_type` text,
	`last_error` text,
	`delivered_at` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `webhook_deliveries_log` ON `webhook_deliveries` (`tenant_id`,`webhook_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `webhook_deliveries_due` ON `webhook_deliveries` (`tenant_id`,`account_id`,`next_attempt_at`) WHERE status = 'pending';--> statement-breakpoint
CREATE INDEX `webhook_deliveries_overdue` ON `webhook_deliveries` (`next_attempt_at`) WHERE status = 'pending';--> statement-breakpoint
CREATE INDEX `webhook_deliveries_created` ON `webhook_deliveries` (`created_at`);--> statement-breakpoint
CREATE TABLE `webhook_health` (
	`tenant_id` text NOT NULL,
	`url` text NOT NULL,
	`consecutive_failures` integer DEFAULT 0 NOT NULL,
	`total_failures` integer DEFAULT 0 NOT NULL,
	`total_successes` integer DEFAULT 0 NOT NULL,
	`failing_since` integer,
	`is_disabled` integer DEFAULT false NOT NULL,
	`disabled_at` integer,
	`disabled_reason` text,
	`last_failure_at` integer,
	`last_failure_status` integer,
	`last_failure_type` text,
	`last_failure_message` text,
	`last_success_at` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`tenant_id`, `url`)
);
--> statement-breakpoint
CREATE TABLE `webhooks` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`name` text NOT NULL,
	`url` text NOT NULL,
	`subscribed_to` text NOT NULL,
	`enabled` integer DEFAULT true NOT NULL,
	`retries_enabled` integer DEFAULT false NOT NULL,
	`signing_secret` text,
	`signing_secret_created_at` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `webhooks_tenant_name` ON `webhooks` (`tenant_id`,`name`);--> statement-breakpoint
CREATE INDEX `webhooks_tenant_created` ON `webhooks` (`tenant_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `events_created` ON `events` (`created_at`);