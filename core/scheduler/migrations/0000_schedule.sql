CREATE TABLE `schedule_firings` (
	`service` text NOT NULL,
	`ref` text NOT NULL,
	`due` integer NOT NULL,
	`status` text NOT NULL,
	`count` integer DEFAULT 1 NOT NULL,
	`claimed` integer NOT NULL,
	`finished` integer,
	`detail` text,
	PRIMARY KEY(`service`, `ref`, `due`)
);
--> statement-breakpoint
CREATE TABLE `schedule_jobs` (
	`service` text NOT NULL,
	`ref` text NOT NULL,
	`owner` text,
	`scopes` text NOT NULL,
	`start` integer NOT NULL,
	`offset` integer NOT NULL,
	`repeat` text,
	`next_due` integer,
	`created` integer NOT NULL,
	PRIMARY KEY(`service`, `ref`)
);
--> statement-breakpoint
CREATE INDEX `schedule_jobs_next_due` ON `schedule_jobs` (`next_due`);