-- Issue 25, what an agent does in a conversation: the message a message quotes, and the reactions on a message.
-- reply_to: our message id when the quoted message is stored, else the upstream's id for it; null when not a reply.
ALTER TABLE `messages` ADD `reply_to` text;--> statement-breakpoint
-- reactions: a JSON array of {emoji, from, at}, one per sender (the contact id, or "me" for the account's own); null when none.
ALTER TABLE `messages` ADD `reactions` text;
