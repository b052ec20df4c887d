CREATE TABLE "home_prefs" (
	"account" text PRIMARY KEY NOT NULL,
	"place" text,
	"lat" double precision,
	"lon" double precision,
	"cards" text DEFAULT '{}' NOT NULL,
	"updated" bigint NOT NULL
);

