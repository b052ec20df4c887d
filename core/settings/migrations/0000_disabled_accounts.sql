CREATE TABLE `disabled_accounts` (
	`account` text PRIMARY KEY NOT NULL,
	`at` integer NOT NULL,
	`by` text NOT NULL
);
