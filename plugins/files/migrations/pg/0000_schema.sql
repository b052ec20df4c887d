CREATE TABLE "files_files" (
	"id" text PRIMARY KEY NOT NULL,
	"owner" text NOT NULL,
	"name" text NOT NULL,
	"type" text NOT NULL,
	"size" bigint NOT NULL,
	"hash" text NOT NULL,
	"encoding" text NOT NULL,
	"folder" text DEFAULT '' NOT NULL,
	"share" text,
	"created" bigint NOT NULL,
	CONSTRAINT "files_files_share_unique" UNIQUE("share")
);

--> statement-breakpoint
CREATE TABLE "files_folders" (
	"owner" text NOT NULL,
	"path" text NOT NULL,
	"created" bigint NOT NULL,
	CONSTRAINT "files_folders_owner_path_pk" PRIMARY KEY("owner","path")
);

--> statement-breakpoint
CREATE TABLE "files_locks" (
	"token" text PRIMARY KEY NOT NULL,
	"owner" text NOT NULL,
	"path" text NOT NULL,
	"depth" text NOT NULL,
	"holder" text DEFAULT '' NOT NULL,
	"expires" bigint NOT NULL
);

--> statement-breakpoint
CREATE INDEX "files_owner_created" ON "files_files" USING btree ("owner","created");
--> statement-breakpoint
CREATE INDEX "files_hash" ON "files_files" USING btree ("hash");
--> statement-breakpoint
CREATE INDEX "files_owner_folder" ON "files_files" USING btree ("owner","folder","name");
--> statement-breakpoint
CREATE INDEX "files_locks_owner_path" ON "files_locks" USING btree ("owner","path");
