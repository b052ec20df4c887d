-- Every word of a search matches as a prefix. Without a prefix index FTS5
-- merges the postings of every word that starts with a short prefix ("th":
-- the, then, there, ...) before it can return a row, which is most of the
-- cost of a search for a common word; with one, the prefix has postings of
-- its own. The index is rebuilt with the same rowids, so search_refs holds.
CREATE VIRTUAL TABLE `search_index_prefixed` USING fts5(
	`service` UNINDEXED,
	`kind` UNINDEXED,
	`ref` UNINDEXED,
	`owner` UNINDEXED,
	`title`,
	`body`,
	tokenize = 'porter unicode61 remove_diacritics 2',
	prefix = '2 3'
);
--> statement-breakpoint
INSERT INTO `search_index_prefixed` (`rowid`, `service`, `kind`, `ref`, `owner`, `title`, `body`) SELECT `rowid`, `service`, `kind`, `ref`, `owner`, `title`, `body` FROM `search_index`;
--> statement-breakpoint
DROP TABLE `search_index`;
--> statement-breakpoint
ALTER TABLE `search_index_prefixed` RENAME TO `search_index`;
