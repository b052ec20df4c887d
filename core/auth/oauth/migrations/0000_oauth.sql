CREATE TABLE `oauth_access` (
	`token` text PRIMARY KEY NOT NULL,
	`grant` text NOT NULL,
	FOREIGN KEY (`token`) REFERENCES `tokens`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`grant`) REFERENCES `oauth_grants`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `oauth_access_grant` ON `oauth_access` (`grant`);--> statement-breakpoint
CREATE TABLE `oauth_clients` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`redirect_uris` text NOT NULL,
	`kind` text NOT NULL,
	`created` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `oauth_codes` (
	`hash` text PRIMARY KEY NOT NULL,
	`account` text NOT NULL,
	`client` text NOT NULL,
	`redirect_uri` text NOT NULL,
	`challenge` text NOT NULL,
	`scopes` text NOT NULL,
	`audience` text NOT NULL,
	`expires` integer NOT NULL,
	`grant` text,
	FOREIGN KEY (`account`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `oauth_grants` (
	`id` text PRIMARY KEY NOT NULL,
	`account` text NOT NULL,
	`client` text NOT NULL,
	`client_name` text NOT NULL,
	`scopes` text NOT NULL,
	`audience` text NOT NULL,
	`created` integer NOT NULL,
	`revoked` integer,
	FOREIGN KEY (`account`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `oauth_grants_account` ON `oauth_grants` (`account`);--> statement-breakpoint
CREATE TABLE `oauth_refresh` (
	`hash` text PRIMARY KEY NOT NULL,
	`grant` text NOT NULL,
	`created` integer NOT NULL,
	`used` integer,
	FOREIGN KEY (`grant`) REFERENCES `oauth_grants`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `oauth_refresh_grant` ON `oauth_refresh` (`grant`);