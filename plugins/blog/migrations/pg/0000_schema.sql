CREATE TABLE "blog_posts" (
	"id" text PRIMARY KEY NOT NULL,
	"author" text NOT NULL,
	"author_name" text NOT NULL,
	"title" text NOT NULL,
	"content" text NOT NULL,
	"tags" text DEFAULT '' NOT NULL,
	"private" bigint DEFAULT 0 NOT NULL,
	"created" bigint NOT NULL,
	"updated" bigint NOT NULL
);

--> statement-breakpoint
CREATE INDEX "blog_created" ON "blog_posts" USING btree ("created");
--> statement-breakpoint
CREATE INDEX "blog_author" ON "blog_posts" USING btree ("author");
