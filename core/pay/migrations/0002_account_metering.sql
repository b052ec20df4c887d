CREATE TABLE `pay_accounts` (
	`account` text PRIMARY KEY NOT NULL,
	`metered` integer NOT NULL,
	`by` text NOT NULL,
	`at` integer NOT NULL
);
