CREATE TABLE `ai_usage` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`at` integer NOT NULL,
	`request_id` text NOT NULL,
	`service` text NOT NULL,
	`account` text,
	`kind` text NOT NULL,
	`model` text NOT NULL,
	`provider` text NOT NULL,
	`prompt_tokens` integer,
	`completion_tokens` integer,
	`total_tokens` integer,
	`ms` integer NOT NULL,
	`outcome` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `ai_usage_at` ON `ai_usage` (`at`);--> statement-breakpoint
CREATE INDEX `ai_usage_request` ON `ai_usage` (`request_id`);