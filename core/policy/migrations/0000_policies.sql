CREATE TABLE `approvals` (
	`id` text PRIMARY KEY NOT NULL,
	`account` text NOT NULL,
	`credential` text,
	`client` text NOT NULL,
	`service` text NOT NULL,
	`method` text NOT NULL,
	`args` text NOT NULL,
	`price` integer NOT NULL,
	`reason` text NOT NULL,
	`created` integer NOT NULL,
	`expires` integer NOT NULL,
	`decision` text,
	`decided_by` text,
	`decided` integer,
	FOREIGN KEY (`account`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `approvals_account` ON `approvals` (`account`,`decision`);--> statement-breakpoint
CREATE TABLE `credential_policies` (
	`credential` text PRIMARY KEY NOT NULL,
	`account` text NOT NULL,
	`policy` text NOT NULL,
	`updated` integer NOT NULL,
	FOREIGN KEY (`account`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
