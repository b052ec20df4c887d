DROP INDEX `files_owner_created`;--> statement-breakpoint
CREATE INDEX `files_owner_created` ON `files_files` (`owner`,`created`,`id`);