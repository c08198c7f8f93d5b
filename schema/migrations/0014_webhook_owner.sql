-- Approval links go only to destinations the owner configured (docs/agent-safety.md): a subscription receives
-- message.approval_required only when the owner's key (full, every account, no approval, no expiry) created or
-- last saved it. A subscription from before this column is taken as the owner's only when the records prove it:
-- its tenant had no other kind of key (api_keys keeps revoked keys) when the subscription was last written.
-- Every other one waits until the owner saves it once (PUT /v1/webhooks/{id}).
ALTER TABLE `webhooks` ADD `owner_configured` integer DEFAULT false NOT NULL;
--> statement-breakpoint
UPDATE `webhooks` SET `owner_configured` = 1 WHERE NOT EXISTS (
  SELECT 1 FROM `api_keys` AS k
  WHERE k.`tenant_id` = `webhooks`.`tenant_id`
    AND k.`created_at` <= `webhooks`.`updated_at`
    AND (k.`scope` <> 'full' OR k.`accounts` IS NOT NULL OR k.`approval` <> 0 OR k.`expires_at` IS NOT NULL)
);
