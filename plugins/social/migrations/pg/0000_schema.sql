CREATE TABLE "social_posts" (
	"uri" text PRIMARY KEY NOT NULL,
	"network" text NOT NULL,
	"source" text NOT NULL,
	"handle" text NOT NULL,
	"name" text,
	"text" text NOT NULL,
	"url" text NOT NULL,
	"created" bigint NOT NULL,
	"likes" bigint,
	"reposts" bigint,
	"replies" bigint,
	"seen" bigint NOT NULL
);

--> statement-breakpoint
CREATE INDEX "social_posts_created" ON "social_posts" USING btree ("created");
