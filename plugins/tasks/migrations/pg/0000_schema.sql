CREATE TABLE "tasks" (
	"id" text PRIMARY KEY NOT NULL,
	"owner" text NOT NULL,
	"title" text NOT NULL,
	"detail" text DEFAULT '' NOT NULL,
	"assignee" text DEFAULT 'me' NOT NULL,
	"due" bigint,
	"status" text DEFAULT 'todo' NOT NULL,
	"result" text DEFAULT '' NOT NULL,
	"created" bigint NOT NULL,
	"updated" bigint NOT NULL,
	"done" bigint,
	"scopes" text DEFAULT '["tasks"]' NOT NULL
);

--> statement-breakpoint
CREATE INDEX "tasks_owner_status" ON "tasks" USING btree ("owner","status");
--> statement-breakpoint
CREATE INDEX "tasks_open_first" ON "tasks" USING btree ("owner",("status" = 'done'),(CASE WHEN "status" = 'done' THEN -"done" WHEN "due" IS NULL THEN 9e15 ELSE "due" END),"created");
