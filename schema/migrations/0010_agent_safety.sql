ALTER TABLE `api_keys` ADD `scope` text DEFAULT 'full' NOT NULL;--> statement-breakpoint
ALTER TABLE `api_keys` ADD `label` text;--> statement-breakpoint
ALTER TABLE `api_keys` ADD `accounts` text;--> statement-breakpoint
ALTER TABLE `api_keys` ADD `expires_at` integer;--> statement-breakpoint
ALTER TABLE `api_keys` ADD `reply_window_s` integer;--> statement-breakpoint
ALTER TABLE `api_keys` ADD `approval` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `api_keys` ADD `parent_id` text;--> statement-breakpoint
CREATE TABLE `audit_log` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`tenant_id` text NOT NULL,
	`key_id` text,
	`key_label` text,
	`action` text NOT NULL,
	`route` text NOT NULL,
	`account_id` text,
	`contact_id` text,
	`message_id` text,
	`outcome` text NOT NULL,
	`code` text,
	`status` integer NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `audit_tenant_seq` ON `audit_log` (`tenant_id`,`seq`);--> statement-breakpoint
CREATE INDEX `audit_created` ON `audit_log` (`created_at`);--> statement-breakpoint
CREATE TABLE `message_approvals` (
	`message_id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`account_id` text NOT NULL,
	`key_id` text NOT NULL,
	`expires_at` integer NOT NULL,
	`decided_at` integer,
	`decision` text,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `message_approvals_open` ON `message_approvals` (`expires_at`) WHERE decided_at is null;
