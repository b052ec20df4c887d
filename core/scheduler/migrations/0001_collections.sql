CREATE TABLE `schedule_collections` (
	`service` text PRIMARY KEY NOT NULL,
	`attempted` integer NOT NULL,
	`succeeded` integer,
	`failures` integer DEFAULT 0 NOT NULL,
	`error` text
);
