-- alpha: per-tenant switch for the passkey ceremony when linking a number (docs/channels/alpha.md); off by default.
ALTER TABLE `tenants` ADD `alpha_passkey_linking` integer DEFAULT false NOT NULL;
