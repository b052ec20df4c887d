CREATE TABLE "prayer_texts" (
	"name" text PRIMARY KEY NOT NULL,
	"url" text NOT NULL,
	"fetched" bigint NOT NULL,
	"body" text NOT NULL
);

