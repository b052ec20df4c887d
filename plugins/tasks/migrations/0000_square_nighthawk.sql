CREATE TABLE `tasks` (
	`id` text PRIMARY KEY NOT NULL,
	`owner` text NOT NULL,
	`title` text NOT NULL,
	`detail` text DEFAULT '' NOT NULL,
	`assignee` text DEFAULT 'me' NOT NULL,
	`due` integer,
	`status` text DEFAULT 'todo' NOT NULL,
	`result` text DEFAULT '' NOT NULL,
	`created` integer NOT NULL,
	`updated` integer NOT NULL,
	`done` integer
);
--> statement-breakpoint
CREATE INDEX `tasks_owner_status` ON `tasks` (`owner`,`status`);