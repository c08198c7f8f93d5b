-- Issue 22, the data tier: message retention per tenant, the outbound indexes, and per-account figures kept by triggers.
-- Retention (docs/api.md, "Retention and archive"): null = the service default, 0 = forever (set by the admin API).
ALTER TABLE `tenants` ADD `message_retention_days` integer;--> statement-breakpoint
ALTER TABLE `tenants` ADD `retention_checked_at` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX `tenants_retention_due` ON `tenants` (`retention_checked_at`);--> statement-breakpoint
-- Outbound rows only: outbound lists, read watermarks and the retention's contact check no longer walk the inbound history.
CREATE INDEX `messages_outbound` ON `messages` (`tenant_id`,`account_id`,`seq`) WHERE direction = 'outbound';--> statement-breakpoint
CREATE INDEX `messages_outbound_tenant` ON `messages` (`tenant_id`,`seq`) WHERE direction = 'outbound';--> statement-breakpoint
CREATE INDEX `messages_outbound_contact` ON `messages` (`tenant_id`,`account_id`,`contact_id`,`created_at`) WHERE direction = 'outbound';--> statement-breakpoint
CREATE TABLE `account_stats` (
	`tenant_id` text NOT NULL,
	`account_id` text NOT NULL,
	`message_count` integer DEFAULT 0 NOT NULL,
	`last_inbound_at` integer,
	`last_outbound_at` integer,
	PRIMARY KEY(`tenant_id`, `account_id`)
);--> statement-breakpoint
-- The figures of the history already stored: the one time this reads every message.
INSERT INTO `account_stats` (`tenant_id`, `account_id`, `message_count`, `last_inbound_at`, `last_outbound_at`)
SELECT `tenant_id`, `account_id`, count(*),
  max(CASE WHEN `direction` = 'inbound' THEN `created_at` END),
  max(CASE WHEN `direction` = 'outbound' THEN `created_at` END)
FROM `messages` GROUP BY `tenant_id`, `account_id`;--> statement-breakpoint
-- From here on every insert and delete keeps them, inside the statement that changes the message (no statement more).
-- max(a, b) is null when either is, hence the coalesce: a first inbound message leaves last_outbound_at as it was.
CREATE TRIGGER `account_stats_insert` AFTER INSERT ON `messages` BEGIN
  INSERT INTO `account_stats` (`tenant_id`, `account_id`, `message_count`, `last_inbound_at`, `last_outbound_at`)
  VALUES (NEW.`tenant_id`, NEW.`account_id`, 1,
    CASE WHEN NEW.`direction` = 'inbound' THEN NEW.`created_at` END,
    CASE WHEN NEW.`direction` = 'outbound' THEN NEW.`created_at` END)
  ON CONFLICT (`tenant_id`, `account_id`) DO UPDATE SET
    `message_count` = `message_count` + 1,
    `last_inbound_at` = coalesce(max(`last_inbound_at`, excluded.`last_inbound_at`), `last_inbound_at`, excluded.`last_inbound_at`),
    `last_outbound_at` = coalesce(max(`last_outbound_at`, excluded.`last_outbound_at`), `last_outbound_at`, excluded.`last_outbound_at`);
END;--> statement-breakpoint
CREATE TRIGGER `account_stats_delete` AFTER DELETE ON `messages` BEGIN
  UPDATE `account_stats` SET `message_count` = `message_count` - 1 WHERE `tenant_id` = OLD.`tenant_id` AND `account_id` = OLD.`account_id`;
END;--> statement-breakpoint
-- An approved held send is queued anew (db/approvals.ts releaseHeldMessage moves created_at to the release).
CREATE TRIGGER `account_stats_release` AFTER UPDATE OF `created_at` ON `messages` WHEN NEW.`direction` = 'outbound' BEGIN
  UPDATE `account_stats` SET `last_outbound_at` = coalesce(max(`last_outbound_at`, NEW.`created_at`), NEW.`created_at`)
  WHERE `tenant_id` = NEW.`tenant_id` AND `account_id` = NEW.`account_id`;
END;
