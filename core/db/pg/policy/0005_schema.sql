CREATE TABLE "mcp_tasks" (
	"id" text PRIMARY KEY NOT NULL,
	"account" text NOT NULL,
	"credential" text NOT NULL,
	"approval" text,
	"tool" text NOT NULL,
	"args" text,
	"status" text NOT NULL,
	"status_message" text,
	"result" text,
	"created" bigint NOT NULL,
	"updated" bigint NOT NULL,
	"ttl" bigint NOT NULL,
	"expires" bigint NOT NULL
);

--> statement-breakpoint
ALTER TABLE "mcp_tasks" ADD CONSTRAINT "mcp_tasks_account_accounts_id_fk" FOREIGN KEY ("account") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
CREATE INDEX "mcp_tasks_credential" ON "mcp_tasks" USING btree ("credential","created");
