CREATE TABLE `password_links` (
	`hash` text PRIMARY KEY NOT NULL,
	`account` text NOT NULL,
	`created` integer NOT NULL,
	`expires` integer NOT NULL,
	`used` integer,
	FOREIGN KEY (`account`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `password_links_account` ON `password_links` (`account`);