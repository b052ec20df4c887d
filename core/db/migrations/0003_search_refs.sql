-- FTS5 cannot index its UNINDEXED columns, so replacing an entry by
-- (service, kind, ref) scanned the whole index. This table finds its rowid.
CREATE TABLE `search_refs` (
	`service` text NOT NULL,
	`kind` text NOT NULL,
	`ref` text NOT NULL,
	`id` integer NOT NULL,
	PRIMARY KEY (`service`, `kind`, `ref`)
) WITHOUT ROWID;
--> statement-breakpoint
INSERT OR REPLACE INTO `search_refs` (`service`, `kind`, `ref`, `id`) SELECT `service`, `kind`, `ref`, `rowid` FROM `search_index`;
