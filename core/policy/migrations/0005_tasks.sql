CREATE TABLE `mcp_tasks` (
	`id` text PRIMARY KEY NOT NULL,
	`account` text NOT NULL,
	`credential` text NOT NULL,
	`approval` text,
	`tool` text NOT NULL,
	`args` text,
	`status` text NOT NULL,
	`status_message` text,
	`result` text,
	`created` integer NOT NULL,
	`updated` integer NOT NULL,
	`ttl` integer NOT NULL,
	`expires` integer NOT NULL,
	FOREIGN KEY (`account`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `mcp_tasks_credential` ON `mcp_tasks` (`credential`,`created`);