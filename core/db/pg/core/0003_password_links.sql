CREATE TABLE "password_links" (
	"hash" text PRIMARY KEY NOT NULL,
	"account" text NOT NULL,
	"created" bigint NOT NULL,
	"expires" bigint NOT NULL,
	"used" bigint
);

--> statement-breakpoint
ALTER TABLE "password_links" ADD CONSTRAINT "password_links_account_accounts_id_fk" FOREIGN KEY ("account") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
CREATE INDEX "password_links_account" ON "password_links" USING btree ("account");
