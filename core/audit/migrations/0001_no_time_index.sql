-- The log is written on every call, so what each entry costs to keep is
-- cut: no AUTOINCREMENT (its counter row in sqlite_sequence was rewritten by
-- every insert) and no index on the time (the retention sweep goes by id,
-- ids being given in the order entries are written). SQLite gives a new row
-- the newest id plus one, so the newest entry is never deleted: otherwise a
-- sweep that emptied the log would give its ids again, and a page's or an
-- export's cursor would name other entries. The table is copied (SQLite
-- cannot take AUTOINCREMENT off in place), ids kept; its triggers go with
-- the old table and are made again.
PRAGMA foreign_keys=OFF;--> statement-breakpoint
CREATE TABLE `__new_audit_log` (
	`id` integer PRIMARY KEY NOT NULL,
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
INSERT INTO `__new_audit_log`("id", "at", "call_id", "account", "via", "credential", "credential_name", "surface", "service", "method", "args", "args_hash", "credits", "paid", "outcome", "status", "approved") SELECT "id", "at", "call_id", "account", "via", "credential", "credential_name", "surface", "service", "method", "args", "args_hash", "credits", "paid", "outcome", "status", "approved" FROM `audit_log`;--> statement-breakpoint
DROP TABLE `audit_log`;--> statement-breakpoint
ALTER TABLE `__new_audit_log` RENAME TO `audit_log`;--> statement-breakpoint
PRAGMA foreign_keys=ON;--> statement-breakpoint
CREATE INDEX `audit_log_account` ON `audit_log` (`account`,`id`);--> statement-breakpoint
CREATE TRIGGER `audit_log_no_update` BEFORE UPDATE ON `audit_log` BEGIN SELECT RAISE(ABORT, 'audit_log is append-only'); END;--> statement-breakpoint
CREATE TRIGGER `audit_log_keep_newest` BEFORE DELETE ON `audit_log` WHEN OLD.`id` >= (SELECT max(`id`) FROM `audit_log`) BEGIN SELECT RAISE(ABORT, 'audit_log is append-only: its newest entry is never removed'); END;
