-- dav's sync state, written by hand as its SQLite migration is (it has no schema.ts).
CREATE TABLE "dav_items" (
	"account" text NOT NULL,
	"collection" text NOT NULL,
	"name" text NOT NULL,
	"ref" text,
	"uid" text,
	"fingerprint" text,
	"raw" text,
	"raw_fingerprint" text,
	"revision" bigint NOT NULL,
	PRIMARY KEY ("account", "collection", "name")
);
--> statement-breakpoint
CREATE INDEX "dav_items_ref" ON "dav_items" ("account", "collection", "ref");
--> statement-breakpoint
CREATE INDEX "dav_items_revision" ON "dav_items" ("account", "collection", "revision");
--> statement-breakpoint
CREATE TABLE "dav_collections" (
	"account" text NOT NULL,
	"collection" text NOT NULL,
	"revision" bigint NOT NULL,
	PRIMARY KEY ("account", "collection")
);
