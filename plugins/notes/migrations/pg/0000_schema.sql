CREATE TABLE "notes" (
	"owner" text NOT NULL,
	"title" text NOT NULL,
	"text" text NOT NULL,
	"created" bigint NOT NULL,
	"updated" bigint NOT NULL,
	CONSTRAINT "notes_owner_title_pk" PRIMARY KEY("owner","title")
);

