CREATE TABLE `media` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`account_id` text NOT NULL,
	`kind` text NOT NULL,
	`content_type` text NOT NULL,
	`size` integer NOT NULL,
	`file_name` text,
	`status` text NOT NULL,
	`reason` text,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `media_account` ON `media` (`tenant_id`,`account_id`);--> statement-breakpoint
CREATE INDEX `media_created` ON `media` (`created_at`);--> statement-breakpoint
ALTER TABLE `messages` ADD `media_id` text;--> statement-breakpoint
ALTER TABLE `messages` ADD `media_kind` text;--> statement-breakpoint
ALTER TABLE `messages` ADD `media_size` integer;--> statement-breakpoint
ALTER TABLE `messages` ADD `media_file_name` text;--> statement-breakpoint
ALTER TABLE `messages` ADD `media_error` text;
