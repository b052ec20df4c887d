-- The words inside a URL, an address or a path are words, as they are in
-- SQLite's FTS5 (unicode61 splits "https://pg.example/two" into https, pg,
-- example and two): PostgreSQL's parser keeps them whole as a URL, a host
-- and a path, so "two" and "example" found nothing. Punctuation becomes a
-- space before the parser sees the text, on both title and body.
CREATE FUNCTION hearth_words(t text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
	SELECT regexp_replace(t, '[[:punct:][:space:]]+', ' ', 'g')
$$;
--> statement-breakpoint
ALTER TABLE "search_index" DROP COLUMN "doc";
--> statement-breakpoint
ALTER TABLE "search_index" ADD COLUMN "doc" tsvector GENERATED ALWAYS AS (setweight(to_tsvector('hearth', hearth_words("title")), 'A') || setweight(to_tsvector('hearth', hearth_words("body")), 'D')) STORED;
--> statement-breakpoint
CREATE INDEX "search_index_doc" ON "search_index" USING gin ("doc");
