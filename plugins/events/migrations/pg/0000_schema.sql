CREATE TABLE "events_feeds" (
	"owner" text PRIMARY KEY NOT NULL,
	"key" text NOT NULL,
	"created" bigint NOT NULL,
	CONSTRAINT "events_feeds_key_unique" UNIQUE("key")
);

--> statement-breakpoint
CREATE TABLE "events_events" (
	"id" text PRIMARY KEY NOT NULL,
	"owner" text NOT NULL,
	"title" text NOT NULL,
	"note" text DEFAULT '' NOT NULL,
	"start" bigint NOT NULL,
	"offset" bigint NOT NULL,
	"minutes" bigint NOT NULL,
	"repeat" text,
	"tz" text,
	"prompt" text,
	"scopes" text,
	"created" bigint NOT NULL
);

--> statement-breakpoint
CREATE INDEX "events_events_owner" ON "events_events" USING btree ("owner","start");
