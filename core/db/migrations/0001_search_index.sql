-- Full-text index shared by plugins that search (ctx.index). drizzle-kit has no
-- notion of FTS5 virtual tables, so this one is written by hand.
CREATE VIRTUAL TABLE `search_index` USING fts5(
	`service` UNINDEXED,
	`kind` UNINDEXED,
	`ref` UNINDEXED,
	`owner` UNINDEXED,
	`title`,
	`body`,
	tokenize = 'porter unicode61 remove_diacritics 2'
);
