CREATE TABLE `home_prefs` (
	`account` text PRIMARY KEY NOT NULL,
	`place` text,
	`lat` real,
	`lon` real,
	`prayer` integer DEFAULT 0 NOT NULL,
	`prayer_method` text,
	`updated` integer NOT NULL
);
