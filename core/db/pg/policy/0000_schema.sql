CREATE TABLE "approvals" (
	"id" text PRIMARY KEY NOT NULL,
	"account" text NOT NULL,
	"credential" text,
	"client" text NOT NULL,
	"service" text NOT NULL,
	"method" text NOT NULL,
	"args" text NOT NULL,
	"price" bigint NOT NULL,
	"reason" text NOT NULL,
	"created" bigint NOT NULL,
	"expires" bigint NOT NULL,
	"decision" text,
	"decided_by" text,
	"decided" bigint
);

--> statement-breakpoint
CREATE TABLE "credential_policies" (
	"credential" text PRIMARY KEY NOT NULL,
	"account" text NOT NULL,
	"policy" text NOT NULL,
	"updated" bigint NOT NULL
);

--> statement-breakpoint
ALTER TABLE "approvals" ADD CONSTRAINT "approvals_account_accounts_id_fk" FOREIGN KEY ("account") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
ALTER TABLE "credential_policies" ADD CONSTRAINT "credential_policies_account_accounts_id_fk" FOREIGN KEY ("account") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
CREATE INDEX "approvals_account" ON "approvals" USING btree ("account","decision");
