CREATE TABLE "upstream_cache" (
	"key" text PRIMARY KEY NOT NULL,
	"provider" text NOT NULL,
	"url" text NOT NULL,
	"status" bigint NOT NULL,
	"body" text NOT NULL,
	"fetched" bigint NOT NULL,
	"fresh_until" bigint,
	"revise_until" bigint,
	"keep_until" bigint
);

--> statement-breakpoint
CREATE INDEX "upstream_cache_keep" ON "upstream_cache" USING btree ("keep_until");
