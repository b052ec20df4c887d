-- contacts/find matches any part of a name, an email address or a phone
-- number's digits, which no B-tree index serves: pg_trgm's GIN indexes on the
-- very expressions its ILIKEs test let PostgreSQL find the contacts holding a
-- query of three characters or more, and PostgreSQL keeps them in step with
-- every write itself. pg_trgm ships with PostgreSQL (Debian's postgresql
-- package has it) and is a trusted extension, so a role that may create in
-- the database may add it; where it may not (or the extension is missing),
-- this logs a notice and leaves find reading the address book row by row,
-- with the same answers (README, "PostgreSQL": adding it later).
DO $$
BEGIN
	CREATE EXTENSION IF NOT EXISTS pg_trgm;
	CREATE INDEX contacts_find_name ON contacts USING gin (name_key gin_trgm_ops);
	CREATE INDEX contacts_find_email ON contacts USING gin (lower(email) gin_trgm_ops);
	CREATE INDEX contacts_find_other_emails ON contacts USING gin (lower(other_emails) gin_trgm_ops);
	CREATE INDEX contacts_find_phone ON contacts USING gin (phone_digits gin_trgm_ops);
EXCEPTION WHEN OTHERS THEN
	-- Nothing of the above is kept: the block is undone whole, and the migration goes on.
	RAISE NOTICE 'contacts: no trigram indexes (%), so contacts/find reads each address book row by row', SQLERRM;
END $$;
