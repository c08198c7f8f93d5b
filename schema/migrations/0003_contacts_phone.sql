DROP INDEX `contacts_account`;--> statement-breakpoint
CREATE INDEX `contacts_account_phone` ON `contacts` (`tenant_id`,`account_id`,`phone`);