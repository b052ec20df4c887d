CREATE TABLE `events_feeds` (
	`owner` text PRIMARY KEY NOT NULL,
	`key` text NOT NULL,
	`created` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `events_feeds_key_unique` ON `events_feeds` (`key`);--> statement-breakpoint
CREATE TABLE `events_events` (
	`id` text PRIMARY KEY NOT NULL,
	`owner` text NOT NULL,
	`title` text NOT NULL,
	`note` text DEFAULT '' NOT NULL,
	`start` integer NOT NULL,
	`offset` integer NOT NULL,
	`minutes` integer NOT NULL,
	`repeat` text,
	`prompt` text,
	`created` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `events_events_owner` ON `events_events` (`owner`,`start`);