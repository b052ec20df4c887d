CREATE TABLE `transit_calendar` (
	`feed` text NOT NULL,
	`service` text NOT NULL,
	`days` text NOT NULL,
	`start` text NOT NULL,
	`end` text NOT NULL,
	PRIMARY KEY(`feed`, `service`)
);
--> statement-breakpoint
CREATE TABLE `transit_dates` (
	`feed` text NOT NULL,
	`service` text NOT NULL,
	`date` text NOT NULL,
	`type` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `transit_dates_date` ON `transit_dates` (`feed`,`date`);--> statement-breakpoint
CREATE TABLE `transit_feeds` (
	`id` text PRIMARY KEY NOT NULL,
	`url` text NOT NULL,
	`name` text,
	`timezone` text,
	`size` integer,
	`hash` text,
	`etag` text,
	`last_modified` text,
	`state` text NOT NULL,
	`error` text,
	`checked` integer,
	`imported` integer,
	`start_date` text,
	`end_date` text,
	`stops` integer,
	`trips` integer
);
--> statement-breakpoint
CREATE TABLE `transit_routes` (
	`feed` text NOT NULL,
	`id` text NOT NULL,
	`short_name` text,
	`long_name` text,
	`type` integer,
	PRIMARY KEY(`feed`, `id`)
);
--> statement-breakpoint
CREATE TABLE `transit_sizes` (
	`url` text PRIMARY KEY NOT NULL,
	`size` integer,
	`checked` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `transit_stops` (
	`feed` text NOT NULL,
	`id` text NOT NULL,
	`code` text,
	`name` text NOT NULL,
	`lat` real,
	`lon` real,
	`parent` text,
	`kind` integer NOT NULL,
	PRIMARY KEY(`feed`, `id`)
);
--> statement-breakpoint
CREATE INDEX `transit_stops_lat` ON `transit_stops` (`lat`);--> statement-breakpoint
CREATE INDEX `transit_stops_name` ON `transit_stops` (`name`);--> statement-breakpoint
CREATE INDEX `transit_stops_parent` ON `transit_stops` (`feed`,`parent`);--> statement-breakpoint
CREATE TABLE `transit_times` (
	`feed` text NOT NULL,
	`trip` text NOT NULL,
	`stop` text NOT NULL,
	`seq` integer NOT NULL,
	`arrival` integer,
	`departure` integer,
	`headsign` text
);
--> statement-breakpoint
CREATE INDEX `transit_times_stop` ON `transit_times` (`feed`,`stop`,`departure`);--> statement-breakpoint
CREATE TABLE `transit_trips` (
	`feed` text NOT NULL,
	`id` text NOT NULL,
	`route` text NOT NULL,
	`service` text NOT NULL,
	`headsign` text,
	PRIMARY KEY(`feed`, `id`)
);
