ALTER TABLE `contacts` ADD `email_types` text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE `contacts` ADD `phone_types` text DEFAULT '' NOT NULL;