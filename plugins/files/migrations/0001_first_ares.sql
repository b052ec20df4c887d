CREATE TABLE `files_folders` (
	`owner` text NOT NULL,
	`path` text NOT NULL,
	`created` integer NOT NULL,
	PRIMARY KEY(`owner`, `path`)
);
--> statement-breakpoint
CREATE TABLE `files_locks` (
	`token` text PRIMARY KEY NOT NULL,
	`owner` text NOT NULL,
	`path` text NOT NULL,
	`depth` text NOT NULL,
	`holder` text DEFAULT '' NOT NULL,
	`expires` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `files_locks_owner_path` ON `files_locks` (`owner`,`path`);--> statement-breakpoint
ALTER TABLE `files_files` ADD `folder` text DEFAULT '' NOT NULL;--> statement-breakpoint
CREATE INDEX `files_owner_folder` ON `files_files` (`owner`,`folder`,`name`);