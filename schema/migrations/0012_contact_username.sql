-- beta: a person's public @username (without the @), shown on their contact beside the phone and name.
ALTER TABLE `contacts` ADD `username` text;
