CREATE TABLE `relays` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text,
	`name` text,
	`hash` text NOT NULL,
	`prefix` text NOT NULL,
	`created_at` integer NOT NULL,
	`revoked_at` integer,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `relays_hash` ON `relays` (`hash`);--> statement-breakpoint
CREATE INDEX `relays_tenant` ON `relays` (`tenant_id`);--> statement-breakpoint
ALTER TABLE `contacts` ADD `peer_id` text;