CREATE TABLE `wallet_keys` (
	`account` text PRIMARY KEY NOT NULL,
	`address` text NOT NULL,
	`sealed` text NOT NULL,
	`created` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `wallet_payments` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`account` text NOT NULL,
	`server` text NOT NULL,
	`tool` text NOT NULL,
	`amount` text NOT NULL,
	`pay_to` text NOT NULL,
	`network` text NOT NULL,
	`asset` text NOT NULL,
	`transaction` text NOT NULL,
	`at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `wallet_payments_account_at` ON `wallet_payments` (`account`,`at`);