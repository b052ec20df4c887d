-- What repeats from call to call (the credential, the surface, the method,
-- the outcome) is kept once, in audit_kinds, and each entry names its kind:
-- writing a row of nine columns instead of seventeen, most of them text,
-- costs SQLite half as much, and the log is written on every call. An
-- entry's hash may be null where it is the SHA-256 of its preview (plain
-- arguments, whose preview is their canonical JSON): the reader takes it.
-- Entries already kept keep their ids, values and hashes; the view
-- audit_entries shows each whole, as audit_log did.
PRAGMA foreign_keys=OFF;--> statement-breakpoint
CREATE TABLE `audit_kinds` (
	`id` integer PRIMARY KEY NOT NULL,
	`via` text NOT NULL,
	`credential` text,
	`credential_name` text,
	`surface` text NOT NULL,
	`service` text NOT NULL,
	`method` text NOT NULL,
	`outcome` text NOT NULL,
	`status` integer NOT NULL,
	`approved` text NOT NULL
);
--> statement-breakpoint
INSERT INTO `audit_kinds` (`via`, `credential`, `credential_name`, `surface`, `service`, `method`, `outcome`, `status`, `approved`)
	SELECT DISTINCT `via`, `credential`, `credential_name`, `surface`, `service`, `method`, `outcome`, `status`, `approved` FROM `audit_log`;--> statement-breakpoint
CREATE TABLE `__new_audit_log` (
	`id` integer PRIMARY KEY NOT NULL,
	`at` integer NOT NULL,
	`call_id` text NOT NULL,
	`account` text,
	`kind` integer NOT NULL,
	`args` text NOT NULL,
	`args_hash` text,
	`credits` integer NOT NULL,
	`paid` text
);
--> statement-breakpoint
INSERT INTO `__new_audit_log` (`id`, `at`, `call_id`, `account`, `kind`, `args`, `args_hash`, `credits`, `paid`)
	SELECT l.`id`, l.`at`, l.`call_id`, l.`account`, k.`id`, l.`args`, l.`args_hash`, l.`credits`, l.`paid` FROM `audit_log` l JOIN `audit_kinds` k
	ON k.`via` = l.`via` AND k.`credential` IS l.`credential` AND k.`credential_name` IS l.`credential_name` AND k.`surface` = l.`surface` AND k.`service` = l.`service`
	AND k.`method` = l.`method` AND k.`outcome` = l.`outcome` AND k.`status` = l.`status` AND k.`approved` = l.`approved`;--> statement-breakpoint
DROP TABLE `audit_log`;--> statement-breakpoint
ALTER TABLE `__new_audit_log` RENAME TO `audit_log`;--> statement-breakpoint
PRAGMA foreign_keys=ON;--> statement-breakpoint
CREATE INDEX `audit_log_account` ON `audit_log` (`account`,`id`);--> statement-breakpoint
CREATE TRIGGER `audit_log_no_update` BEFORE UPDATE ON `audit_log` BEGIN SELECT RAISE(ABORT, 'audit_log is append-only'); END;--> statement-breakpoint
CREATE TRIGGER `audit_log_keep_newest` BEFORE DELETE ON `audit_log` WHEN OLD.`id` >= (SELECT max(`id`) FROM `audit_log`) BEGIN SELECT RAISE(ABORT, 'audit_log is append-only: its newest entry is never removed'); END;--> statement-breakpoint
CREATE TRIGGER `audit_kinds_no_update` BEFORE UPDATE ON `audit_kinds` BEGIN SELECT RAISE(ABORT, 'audit_kinds is append-only'); END;--> statement-breakpoint
CREATE TRIGGER `audit_kinds_no_delete` BEFORE DELETE ON `audit_kinds` BEGIN SELECT RAISE(ABORT, 'audit_kinds is append-only'); END;--> statement-breakpoint
CREATE VIEW `audit_entries` AS SELECT l.`id`, l.`at`, l.`call_id`, l.`account`, k.`via`, k.`credential`, k.`credential_name`, k.`surface`, k.`service`, k.`method`,
	l.`args`, l.`args_hash`, l.`credits`, l.`paid`, k.`outcome`, k.`status`, k.`approved` FROM `audit_log` l JOIN `audit_kinds` k ON k.`id` = l.`kind`;
