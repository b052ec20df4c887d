CREATE TABLE `account_notices` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`account` text NOT NULL,
	`at` integer NOT NULL,
	`text` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `account_notices_account` ON `account_notices` (`account`,`id`);--> statement-breakpoint
CREATE TABLE `backup_runs` (
	`id` text PRIMARY KEY NOT NULL,
	`last_attempt` text,
	`last_success` text,
	`last_failure` text
);
