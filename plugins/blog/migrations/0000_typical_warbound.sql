CREATE TABLE `blog_posts` (
	`id` text PRIMARY KEY NOT NULL,
	`author` text NOT NULL,
	`author_name` text NOT NULL,
	`title` text NOT NULL,
	`content` text NOT NULL,
	`tags` text DEFAULT '' NOT NULL,
	`private` integer DEFAULT false NOT NULL,
	`created` integer NOT NULL,
	`updated` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `blog_created` ON `blog_posts` (`created`);--> statement-breakpoint
CREATE INDEX `blog_author` ON `blog_posts` (`author`);