CREATE TABLE `notes` (
	`owner` text NOT NULL,
	`title` text NOT NULL,
	`text` text NOT NULL,
	`created` integer NOT NULL,
	`updated` integer NOT NULL,
	PRIMARY KEY(`owner`, `title`)
);
