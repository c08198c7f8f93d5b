-- Idempotency keys (docs/idempotency.md): the first answer to a creating POST sent with Idempotency-Key, kept 24 h per
-- tenant and key (hashed); pruned by the cron through the expiry index.
CREATE TABLE `idempotency_keys` (
	`tenant_id` text NOT NULL,
	`key_hash` text NOT NULL,
	`fingerprint` text NOT NULL,
	`claim` text NOT NULL,
	`status` integer,
	`response` text,
	`locked_until` integer,
	`expires_at` integer NOT NULL,
	PRIMARY KEY(`tenant_id`, `key_hash`)
);
--> statement-breakpoint
CREATE INDEX `idempotency_keys_expires` ON `idempotency_keys` (`expires_at`);
