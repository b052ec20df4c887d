CREATE TABLE `files_files` (
	`id` text PRIMARY KEY NOT NULL,
	`owner` text NOT NULL,
	`name` text NOT NULL,
	`type` text NOT NULL,
	`size` integer NOT NULL,
	`hash` text NOT NULL,
	`encoding` text NOT NULL,
	`share` text,
	`created` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `files_files_share_unique` ON `files_files` (`share`);--> statement-breakpoint
CREATE INDEX `files_owner_created` ON `files_files` (`owner`,`created`);--> statement-breakpoint
CREATE INDEX `files_hash` ON `files_files` (`hash`);