CREATE TABLE `apps` (
	`id` text PRIMARY KEY NOT NULL,
	`slug` text NOT NULL,
	`owner` text,
	`owner_name` text NOT NULL,
	`name` text NOT NULL,
	`description` text NOT NULL,
	`tags` text DEFAULT '' NOT NULL,
	`icon` text DEFAULT '' NOT NULL,
	`html` text NOT NULL,
	`price` integer DEFAULT 0 NOT NULL,
	`forked_from` text,
	`starter` integer DEFAULT false NOT NULL,
	`created` integer NOT NULL,
	`updated` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `apps_slug_unique` ON `apps` (`slug`);--> statement-breakpoint
CREATE INDEX `apps_owner` ON `apps` (`owner`);--> statement-breakpoint
CREATE TABLE `apps_grants` (
	`app` text NOT NULL,
	`account` text NOT NULL,
	`method` text NOT NULL,
	`at` integer NOT NULL,
	PRIMARY KEY(`app`, `account`, `method`)
);
--> statement-breakpoint
CREATE TABLE `apps_opens` (
	`ticket` text PRIMARY KEY NOT NULL,
	`app` text NOT NULL,
	`account` text NOT NULL,
	`price` integer NOT NULL,
	`at` integer NOT NULL,
	`expires` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `apps_opens_account` ON `apps_opens` (`account`,`app`);--> statement-breakpoint
CREATE TABLE `apps_snippets` (
	`id` text PRIMARY KEY NOT NULL,
	`owner` text NOT NULL,
	`code` text NOT NULL,
	`created` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `apps_store` (
	`app` text NOT NULL,
	`account` text NOT NULL,
	`key` text NOT NULL,
	`value` text NOT NULL,
	`updated` integer NOT NULL,
	PRIMARY KEY(`app`, `account`, `key`)
);
