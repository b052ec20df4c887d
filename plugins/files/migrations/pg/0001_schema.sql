CREATE TABLE "files_props" (
	"owner" text NOT NULL,
	"path" text NOT NULL,
	"ns" text NOT NULL,
	"name" text NOT NULL,
	"xml" text NOT NULL,
	CONSTRAINT "files_props_owner_path_ns_name_pk" PRIMARY KEY("owner","path","ns","name")
);

--> statement-breakpoint
ALTER TABLE "files_locks" ADD COLUMN "scope" text DEFAULT 'exclusive' NOT NULL;
