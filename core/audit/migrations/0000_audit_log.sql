CREATE TABLE `audit_log` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`at` integer NOT NULL,
	`call_id` text NOT NULL,
	`account` text,
	`via` text NOT NULL,
	`credential` text,
	`credential_name` text,
	`surface` text NOT NULL,
	`service` text NOT NULL,
	`method` text NOT NULL,
	`args` text NOT NULL,
	`args_hash` text NOT NULL,
	`credits` integer NOT NULL,
	`paid` text,
	`outcome` text NOT NULL,
	`status` integer NOT NULL,
	`approved` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `audit_log_account` ON `audit_log` (`account`,`id`);--> statement-breakpoint
CREATE INDEX `audit_log_at` ON `audit_log` (`at`);--> statement-breakpoint
CREATE TRIGGER `audit_log_no_update` BEFORE UPDATE ON `audit_log` BEGIN SELECT RAISE(ABORT, 'audit_log is append-only'); END;
