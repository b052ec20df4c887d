CREATE TABLE `mail_messages` (
	`id` text PRIMARY KEY NOT NULL,
	`account` text NOT NULL,
	`folder` text NOT NULL,
	`tag` text,
	`from_addr` text NOT NULL,
	`to_addr` text NOT NULL,
	`subject` text NOT NULL,
	`body` text NOT NULL,
	`message_id` text NOT NULL,
	`in_reply_to` text,
	`refs` text,
	`at` integer NOT NULL,
	`auth` text,
	`raw` text,
	`delivery` text
);
--> statement-breakpoint
CREATE UNIQUE INDEX `mail_messages_once` ON `mail_messages` (`account`,`folder`,`message_id`);--> statement-breakpoint
CREATE INDEX `mail_messages_recent` ON `mail_messages` (`account`,`folder`,`at`);--> statement-breakpoint
CREATE TABLE `mail_outbox` (
	`id` text PRIMARY KEY NOT NULL,
	`message` text NOT NULL,
	`account` text NOT NULL,
	`sender` text NOT NULL,
	`recipient` text NOT NULL,
	`raw` text NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`next_at` integer NOT NULL,
	`claimed` integer,
	`last_error` text,
	`status` text NOT NULL,
	`created` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `mail_outbox_due` ON `mail_outbox` (`status`,`next_at`);