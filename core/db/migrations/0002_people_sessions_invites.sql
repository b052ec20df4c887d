CREATE TABLE `invites` (
	`hash` text PRIMARY KEY NOT NULL,
	`created_by` text NOT NULL,
	`created` integer NOT NULL,
	`expires` integer NOT NULL,
	`used_by` text,
	`used` integer,
	FOREIGN KEY (`created_by`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `sessions` (
	`hash` text PRIMARY KEY NOT NULL,
	`account` text NOT NULL,
	`csrf` text NOT NULL,
	`created` integer NOT NULL,
	`expires` integer NOT NULL,
	`last_seen` integer NOT NULL,
	FOREIGN KEY (`account`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `sessions_account` ON `sessions` (`account`);--> statement-breakpoint
ALTER TABLE `accounts` ADD `password` text;