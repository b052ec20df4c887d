CREATE TABLE `pay_ledger` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`account` text NOT NULL,
	`delta` integer NOT NULL,
	`reason` text NOT NULL,
	`method` text,
	`request_id` text,
	`note` text,
	`at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `pay_ledger_account` ON `pay_ledger` (`account`,`id`);--> statement-breakpoint
CREATE TABLE `pay_x402` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`network` text NOT NULL,
	`asset` text NOT NULL,
	`payer` text NOT NULL,
	`nonce` text NOT NULL,
	`amount` text NOT NULL,
	`credits` integer NOT NULL,
	`method` text NOT NULL,
	`request_id` text NOT NULL,
	`transaction` text NOT NULL,
	`at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `pay_x402_authorization` ON `pay_x402` (`network`,`asset`,`payer`,`nonce`);