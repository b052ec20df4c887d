CREATE TABLE `docs_documents` (
	`id` text PRIMARY KEY NOT NULL,
	`owner` text NOT NULL,
	`title` text NOT NULL,
	`content` text NOT NULL,
	`public` integer DEFAULT false NOT NULL,
	`created` integer NOT NULL,
	`updated` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `docs_owner_updated` ON `docs_documents` (`owner`,`updated`);--> statement-breakpoint
CREATE INDEX `docs_owner_title` ON `docs_documents` (`owner`,`title`);