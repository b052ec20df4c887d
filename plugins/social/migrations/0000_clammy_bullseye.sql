CREATE TABLE `social_posts` (
	`uri` text PRIMARY KEY NOT NULL,
	`network` text NOT NULL,
	`source` text NOT NULL,
	`handle` text NOT NULL,
	`name` text,
	`text` text NOT NULL,
	`url` text NOT NULL,
	`created` integer NOT NULL,
	`likes` integer,
	`reposts` integer,
	`replies` integer,
	`seen` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `social_posts_created` ON `social_posts` (`created`);