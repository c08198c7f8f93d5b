CREATE TABLE `accounts` (
	`tenant_id` text NOT NULL,
	`id` text NOT NULL,
	`channel` text NOT NULL,
	`identifier` text NOT NULL,
	`status` text NOT NULL,
	`status_reason` text,
	`connected_at` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`tenant_id`, `id`),
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `api_keys` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`hash` text NOT NULL,
	`prefix` text NOT NULL,
	`created_at` integer NOT NULL,
	`revoked_at` integer,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `api_keys_hash` ON `api_keys` (`hash`);--> statement-breakpoint
CREATE INDEX `api_keys_tenant` ON `api_keys` (`tenant_id`);--> statement-breakpoint
CREATE TABLE `channel_connections` (
	`tenant_id` text NOT NULL,
	`account_id` text NOT NULL,
	`kind` text NOT NULL,
	`config` text NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`tenant_id`, `account_id`)
);
--> statement-breakpoint
CREATE TABLE `contacts` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`account_id` text NOT NULL,
	`channel` text NOT NULL,
	`phone` text,
	`external_id` text,
	`social_id` text,
	`name` text,
	`first_name` text,
	`last_name` text,
	`email` text,
	`do_not_disturb` integer DEFAULT false NOT NULL,
	`opted_out` integer DEFAULT false NOT NULL,
	`private` integer DEFAULT false NOT NULL,
	`ai_paused` integer DEFAULT false NOT NULL,
	`first_inbound_at` integer,
	`last_inbound_at` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `contacts_account` ON `contacts` (`tenant_id`,`account_id`);--> statement-breakpoint
CREATE TABLE `events` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`account_id` text NOT NULL,
	`type` text NOT NULL,
	`payload` text NOT NULL,
	`created_at` integer NOT NULL,
	`dispatched_at` integer
);
--> statement-breakpoint
CREATE INDEX `events_tenant_created` ON `events` (`tenant_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `events_pending` ON `events` (`tenant_id`,`account_id`,`created_at`) WHERE dispatched_at is null;--> statement-breakpoint
CREATE TABLE `messages` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`id` text NOT NULL,
	`tenant_id` text NOT NULL,
	`account_id` text NOT NULL,
	`contact_id` text NOT NULL,
	`direction` text NOT NULL,
	`text` text NOT NULL,
	`media_url` text,
	`media_content_type` text,
	`status` text NOT NULL,
	`error_code` integer,
	`error_message` text,
	`upstream_id` text,
	`attempts` integer DEFAULT 0 NOT NULL,
	`last_attempt_at` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `messages_id` ON `messages` (`id`);--> statement-breakpoint
CREATE UNIQUE INDEX `messages_upstream` ON `messages` (`tenant_id`,`account_id`,`direction`,`upstream_id`);--> statement-breakpoint
CREATE INDEX `messages_tenant_seq` ON `messages` (`tenant_id`,`seq`);--> statement-breakpoint
CREATE INDEX `messages_account_seq` ON `messages` (`tenant_id`,`account_id`,`seq`);--> statement-breakpoint
CREATE INDEX `messages_queued` ON `messages` (`tenant_id`,`account_id`,`status`) WHERE status = 'queued';--> statement-breakpoint
CREATE TABLE `tenants` (
	`id` text PRIMARY KEY NOT NULL,
	`plan` text NOT NULL,
	`status` text DEFAULT 'active' NOT NULL,
	`suspended_reason` text,
	`suspended_at` integer,
	`api_enabled` integer DEFAULT true NOT NULL,
	`webhooks_enabled` integer DEFAULT true NOT NULL,
	`created_at` integer NOT NULL
);
