CREATE TABLE `files_props` (
	`owner` text NOT NULL,
	`path` text NOT NULL,
	`ns` text NOT NULL,
	`name` text NOT NULL,
	`xml` text NOT NULL,
	PRIMARY KEY(`owner`, `path`, `ns`, `name`)
);
--> statement-breakpoint
ALTER TABLE `files_locks` ADD `scope` text DEFAULT 'exclusive' NOT NULL;