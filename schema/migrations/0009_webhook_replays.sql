-- Replay calls per webhook subscription: one in flight, an hourly quota (issue 14 §2).
CREATE TABLE `webhook_replays` (
	`id` text PRIMARY KEY NOT NULL,
	`webhook_id` text NOT NULL,
	`started_at` integer NOT NULL,
	`finished_at` integer
);
--> statement-breakpoint
CREATE INDEX `webhook_replays_by_webhook` ON `webhook_replays` (`webhook_id`,`started_at`);
