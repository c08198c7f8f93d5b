-- The page inbox (issue 12): the tenant's own registered app, its connect flows, and the connected pages.
CREATE TABLE `social_apps` (
	`tenant_id` text PRIMARY KEY NOT NULL,
	`webhook_id` text NOT NULL,
	`app_id` text NOT NULL,
	`config_id` text NOT NULL,
	`secret` text NOT NULL,
	`verify_token` text NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `social_apps_webhook` ON `social_apps` (`webhook_id`);
--> statement-breakpoint
CREATE TABLE `social_flows` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`status` text NOT NULL,
	`reason` text,
	`state_hash` text NOT NULL,
	`state_used_at` integer,
	`pages` text,
	`account_id` text,
	`expires_at` integer NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `social_flows_state` ON `social_flows` (`state_hash`);
--> statement-breakpoint
CREATE INDEX `social_flows_tenant` ON `social_flows` (`tenant_id`,`created_at`);
--> statement-breakpoint
CREATE TABLE `social_pages` (
	`tenant_id` text NOT NULL,
	`account_id` text NOT NULL,
	`page_id` text NOT NULL,
	`page_name` text NOT NULL,
	`instagram_id` text,
	`instagram_username` text,
	`token` text NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`tenant_id`, `account_id`)
);
--> statement-breakpoint
CREATE INDEX `social_pages_page` ON `social_pages` (`page_id`);
--> statement-breakpoint
CREATE INDEX `social_pages_instagram` ON `social_pages` (`instagram_id`);
