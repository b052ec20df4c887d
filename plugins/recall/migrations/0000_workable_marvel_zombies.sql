CREATE TABLE `recall_conversations` (
	`id` text PRIMARY KEY NOT NULL,
	`owner` text NOT NULL,
	`client` text NOT NULL,
	`agent` text NOT NULL,
	`topic` text NOT NULL,
	`thread` text,
	`started` integer NOT NULL,
	`active` integer NOT NULL,
	`messages` integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE INDEX `recall_conversations_owner_active` ON `recall_conversations` (`owner`,`active`);--> statement-breakpoint
CREATE INDEX `recall_conversations_thread` ON `recall_conversations` (`owner`,`thread`);--> statement-breakpoint
CREATE TABLE `recall_messages` (
	`id` text PRIMARY KEY NOT NULL,
	`conversation` text NOT NULL,
	`owner` text NOT NULL,
	`role` text NOT NULL,
	`content` text NOT NULL,
	`at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `recall_messages_conversation_at` ON `recall_messages` (`conversation`,`at`);