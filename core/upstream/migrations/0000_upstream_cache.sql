CREATE TABLE `upstream_cache` (
	`key` text PRIMARY KEY NOT NULL,
	`provider` text NOT NULL,
	`url` text NOT NULL,
	`status` integer NOT NULL,
	`body` text NOT NULL,
	`fetched` integer NOT NULL,
	`fresh_until` integer,
	`revise_until` integer,
	`keep_until` integer
);
--> statement-breakpoint
CREATE INDEX `upstream_cache_keep` ON `upstream_cache` (`keep_until`);