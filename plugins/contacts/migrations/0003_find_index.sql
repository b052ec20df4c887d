-- contacts/find matches any part of a name, an email address or a phone
-- number's digits, which no B-tree index serves: without this, every find
-- read the caller's whole address book. A trigram index (FTS5's `trigram`
-- tokenizer, written by hand as drizzle-kit has no notion of virtual tables)
-- finds the contacts holding a query of three characters or more; the find
-- still checks each with its own LIKEs, so its answers are what they were.
--
-- One index serves every account, so each account's entries sit in a rowid
-- range of their own: the entry's rowid is its account's slot (from
-- contacts_find_owners) times 2^40, plus the contact's rowid. A find reads
-- its caller's range alone, so it costs what the caller's own contacts
-- match, however many other accounts hold. Contentless, keyed by rowids
-- (which VACUUM and VACUUM INTO, as backups use it, keep), and kept in step
-- by triggers, so every write to a contact (the API, CardDAV, an import, a
-- delete, an account's removal) changes it in the same transaction. (The
-- triggers say NOT EXISTS rather than INSERT OR IGNORE: an outer statement's
-- conflict clause, such as contacts/add's upsert, would override theirs.)
CREATE TABLE `contacts_find_owners` (
	`slot` integer PRIMARY KEY,
	`owner` text NOT NULL UNIQUE
);
--> statement-breakpoint
CREATE VIRTUAL TABLE `contacts_find` USING fts5(
	`name_key`,
	`email`,
	`other_emails`,
	`phone_digits`,
	content = '',
	contentless_delete = 1,
	tokenize = 'trigram'
);
--> statement-breakpoint
INSERT INTO `contacts_find_owners` (`owner`) SELECT DISTINCT `owner` FROM `contacts` ORDER BY `owner`;
--> statement-breakpoint
INSERT INTO `contacts_find` (`rowid`, `name_key`, `email`, `other_emails`, `phone_digits`)
	SELECT o.`slot` * 1099511627776 + c.`rowid`, c.`name_key`, c.`email`, c.`other_emails`, c.`phone_digits` FROM `contacts` c JOIN `contacts_find_owners` o ON o.`owner` = c.`owner`;
--> statement-breakpoint
CREATE TRIGGER `contacts_find_insert` AFTER INSERT ON `contacts` BEGIN
	INSERT INTO `contacts_find_owners` (`owner`) SELECT new.`owner` WHERE NOT EXISTS (SELECT 1 FROM `contacts_find_owners` WHERE `owner` = new.`owner`);
	INSERT INTO `contacts_find` (`rowid`, `name_key`, `email`, `other_emails`, `phone_digits`)
		VALUES ((SELECT `slot` FROM `contacts_find_owners` WHERE `owner` = new.`owner`) * 1099511627776 + new.`rowid`, new.`name_key`, new.`email`, new.`other_emails`, new.`phone_digits`);
END;
--> statement-breakpoint
CREATE TRIGGER `contacts_find_delete` AFTER DELETE ON `contacts` BEGIN
	DELETE FROM `contacts_find` WHERE `rowid` = (SELECT `slot` FROM `contacts_find_owners` WHERE `owner` = old.`owner`) * 1099511627776 + old.`rowid`;
END;
--> statement-breakpoint
CREATE TRIGGER `contacts_find_update` AFTER UPDATE OF `owner`, `name_key`, `email`, `other_emails`, `phone_digits` ON `contacts`
	-- A sync client sends every field again with each change: what did not change is not indexed again.
	WHEN old.`owner` IS NOT new.`owner` OR old.`name_key` IS NOT new.`name_key` OR old.`email` IS NOT new.`email` OR old.`other_emails` IS NOT new.`other_emails` OR old.`phone_digits` IS NOT new.`phone_digits`
BEGIN
	DELETE FROM `contacts_find` WHERE `rowid` = (SELECT `slot` FROM `contacts_find_owners` WHERE `owner` = old.`owner`) * 1099511627776 + old.`rowid`;
	INSERT INTO `contacts_find_owners` (`owner`) SELECT new.`owner` WHERE NOT EXISTS (SELECT 1 FROM `contacts_find_owners` WHERE `owner` = new.`owner`);
	INSERT INTO `contacts_find` (`rowid`, `name_key`, `email`, `other_emails`, `phone_digits`)
		VALUES ((SELECT `slot` FROM `contacts_find_owners` WHERE `owner` = new.`owner`) * 1099511627776 + new.`rowid`, new.`name_key`, new.`email`, new.`other_emails`, new.`phone_digits`);
END;
