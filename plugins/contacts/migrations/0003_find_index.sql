-- contacts/find matches any part of a name, an email address or a phone
-- number's digits, which no B-tree index serves: without this, every find
-- read the caller's whole address book. A trigram index (FTS5's `trigram`
-- tokenizer, written by hand as drizzle-kit has no notion of virtual tables)
-- finds the contacts holding a query of three characters or more; the find
-- still checks each with its own LIKE, so its answers are what they were.
-- Contentless, keyed by the contact's rowid (VACUUM and VACUUM INTO, which
-- backups use, keep rowids), and kept in step by triggers, so every write to
-- a contact (the API, CardDAV, an import, a delete, an account's removal)
-- changes it in the same transaction.
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
INSERT INTO `contacts_find` (`rowid`, `name_key`, `email`, `other_emails`, `phone_digits`) SELECT `rowid`, `name_key`, `email`, `other_emails`, `phone_digits` FROM `contacts`;
--> statement-breakpoint
CREATE TRIGGER `contacts_find_insert` AFTER INSERT ON `contacts` BEGIN
	INSERT INTO `contacts_find` (`rowid`, `name_key`, `email`, `other_emails`, `phone_digits`) VALUES (new.`rowid`, new.`name_key`, new.`email`, new.`other_emails`, new.`phone_digits`);
END;
--> statement-breakpoint
CREATE TRIGGER `contacts_find_delete` AFTER DELETE ON `contacts` BEGIN
	DELETE FROM `contacts_find` WHERE `rowid` = old.`rowid`;
END;
--> statement-breakpoint
CREATE TRIGGER `contacts_find_update` AFTER UPDATE OF `name_key`, `email`, `other_emails`, `phone_digits` ON `contacts` BEGIN
	DELETE FROM `contacts_find` WHERE `rowid` = old.`rowid`;
	INSERT INTO `contacts_find` (`rowid`, `name_key`, `email`, `other_emails`, `phone_digits`) VALUES (new.`rowid`, new.`name_key`, new.`email`, new.`other_emails`, new.`phone_digits`);
END;
