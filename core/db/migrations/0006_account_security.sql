CREATE TABLE `auth_challenges` (
	`hash` text PRIMARY KEY NOT NULL,
	`purpose` text NOT NULL,
	`account` text,
	`challenge` text,
	`created` integer NOT NULL,
	`expires` integer NOT NULL,
	`used` integer,
	FOREIGN KEY (`account`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `auth_challenges_expires` ON `auth_challenges` (`expires`);--> statement-breakpoint
CREATE TABLE `passkeys` (
	`id` text PRIMARY KEY NOT NULL,
	`account` text NOT NULL,
	`name` text NOT NULL,
	`public_key` text NOT NULL,
	`counter` integer DEFAULT 0 NOT NULL,
	`transports` text,
	`created` integer NOT NULL,
	`last_used` integer,
	FOREIGN KEY (`account`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `passkeys_account` ON `passkeys` (`account`);--> statement-breakpoint
CREATE TABLE `recovery_codes` (
	`hash` text PRIMARY KEY NOT NULL,
	`account` text NOT NULL,
	`created` integer NOT NULL,
	`used` integer,
	FOREIGN KEY (`account`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `recovery_codes_account` ON `recovery_codes` (`account`);--> statement-breakpoint
CREATE TABLE `totp_secrets` (
	`account` text PRIMARY KEY NOT NULL,
	`secret` text NOT NULL,
	`created` integer NOT NULL,
	`confirmed` integer,
	`last_step` integer,
	FOREIGN KEY (`account`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
ALTER TABLE `sessions` ADD `browser` text;