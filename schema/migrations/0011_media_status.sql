-- Whether a message's media is stored, over the cap or unavailable (a provider URL that could not be fetched: SMS, page inbox).
ALTER TABLE `messages` ADD `media_status` text;
