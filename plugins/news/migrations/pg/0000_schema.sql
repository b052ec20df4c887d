CREATE TABLE "news_articles" (
	"url" text PRIMARY KEY NOT NULL,
	"title" text,
	"byline" text,
	"site" text,
	"published" text,
	"text" text NOT NULL,
	"fetched" bigint NOT NULL
);

--> statement-breakpoint
CREATE TABLE "news_feeds" (
	"url" text PRIMARY KEY NOT NULL,
	"topic" text NOT NULL,
	"name" text NOT NULL,
	"etag" text,
	"last_modified" text,
	"polled" bigint,
	"changed" bigint,
	"error" text
);

--> statement-breakpoint
CREATE TABLE "news_items" (
	"id" text PRIMARY KEY NOT NULL,
	"feed" text NOT NULL,
	"topic" text NOT NULL,
	"source" text NOT NULL,
	"title" text NOT NULL,
	"url" text NOT NULL,
	"summary" text NOT NULL,
	"published" bigint NOT NULL,
	"seen" bigint NOT NULL
);

--> statement-breakpoint
CREATE INDEX "news_items_topic_published" ON "news_items" USING btree ("topic","published");
--> statement-breakpoint
CREATE INDEX "news_items_published" ON "news_items" USING btree ("published");
--> statement-breakpoint
CREATE INDEX "news_items_url" ON "news_items" USING btree ("url");
