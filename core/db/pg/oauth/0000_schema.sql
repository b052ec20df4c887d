CREATE TABLE "oauth_access" (
	"token" text PRIMARY KEY NOT NULL,
	"grant" text NOT NULL
);

--> statement-breakpoint
CREATE TABLE "oauth_clients" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"redirect_uris" text NOT NULL,
	"kind" text NOT NULL,
	"created" bigint NOT NULL
);

--> statement-breakpoint
CREATE TABLE "oauth_codes" (
	"hash" text PRIMARY KEY NOT NULL,
	"account" text NOT NULL,
	"client" text NOT NULL,
	"redirect_uri" text NOT NULL,
	"challenge" text NOT NULL,
	"scopes" text NOT NULL,
	"audience" text NOT NULL,
	"expires" bigint NOT NULL,
	"grant" text
);

--> statement-breakpoint
CREATE TABLE "oauth_grants" (
	"id" text PRIMARY KEY NOT NULL,
	"account" text NOT NULL,
	"client" text NOT NULL,
	"client_name" text NOT NULL,
	"scopes" text NOT NULL,
	"audience" text NOT NULL,
	"created" bigint NOT NULL,
	"revoked" bigint
);

--> statement-breakpoint
CREATE TABLE "oauth_refresh" (
	"hash" text PRIMARY KEY NOT NULL,
	"grant" text NOT NULL,
	"created" bigint NOT NULL,
	"used" bigint
);

--> statement-breakpoint
ALTER TABLE "oauth_access" ADD CONSTRAINT "oauth_access_token_tokens_id_fk" FOREIGN KEY ("token") REFERENCES "public"."tokens"("id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
ALTER TABLE "oauth_access" ADD CONSTRAINT "oauth_access_grant_oauth_grants_id_fk" FOREIGN KEY ("grant") REFERENCES "public"."oauth_grants"("id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
ALTER TABLE "oauth_codes" ADD CONSTRAINT "oauth_codes_account_accounts_id_fk" FOREIGN KEY ("account") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
ALTER TABLE "oauth_grants" ADD CONSTRAINT "oauth_grants_account_accounts_id_fk" FOREIGN KEY ("account") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
ALTER TABLE "oauth_refresh" ADD CONSTRAINT "oauth_refresh_grant_oauth_grants_id_fk" FOREIGN KEY ("grant") REFERENCES "public"."oauth_grants"("id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
CREATE INDEX "oauth_access_grant" ON "oauth_access" USING btree ("grant");
--> statement-breakpoint
CREATE INDEX "oauth_grants_account" ON "oauth_grants" USING btree ("account");
--> statement-breakpoint
CREATE INDEX "oauth_refresh_grant" ON "oauth_refresh" USING btree ("grant");
