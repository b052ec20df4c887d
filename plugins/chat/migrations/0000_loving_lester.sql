CREATE TABLE `chat_messages` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`room` text NOT NULL,
	`author` text NOT NULL,
	`author_name` text NOT NULL,
	`content` text NOT NULL,
	`at` integer NOT NULL,
	FOREIGN KEY (`room`) REFERENCES `chat_rooms`(`room`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `chat_room_at` ON `chat_messages` (`room`,`at`);--> statement-breakpoint
CREATE INDEX `chat_at` ON `chat_messages` (`at`);--> statement-breakpoint
CREATE TABLE `chat_rooms` (
	`room` text PRIMARY KEY NOT NULL,
	`creator` text NOT NULL,
	`created` integer NOT NULL
);
