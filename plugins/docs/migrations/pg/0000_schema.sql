CREATE TABLE "docs_documents" (
	"id" text PRIMARY KEY NOT NULL,
	"owner" text NOT NULL,
	"title" text NOT NULL,
	"content" text NOT NULL,
	"public" bigint DEFAULT 0 NOT NULL,
	"created" bigint NOT NULL,
	"updated" bigint NOT NULL
);

--> statement-breakpoint
CREATE INDEX "docs_owner_updated" ON "docs_documents" USING btree ("owner","updated");
--> statement-breakpoint
CREATE INDEX "docs_owner_title" ON "docs_documents" USING btree ("owner","title");
