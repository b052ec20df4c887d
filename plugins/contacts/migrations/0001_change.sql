ALTER TABLE `contacts` ADD `other_emails` text DEFAULT '[]' NOT NULL;
--> statement-breakpoint
ALTER TABLE `contacts` ADD `other_phones` text DEFAULT '[]' NOT NULL;
