CREATE TABLE "auth_challenges" (
	"hash" text PRIMARY KEY NOT NULL,
	"purpose" text NOT NULL,
	"account" text,
	"challenge" text,
	"created" bigint NOT NULL,
	"expires" bigint NOT NULL,
	"used" bigint
);

--> statement-breakpoint
CREATE TABLE "passkeys" (
	"id" text PRIMARY KEY NOT NULL,
	"account" text NOT NULL,
	"name" text NOT NULL,
	"public_key" text NOT NULL,
	"counter" bigint DEFAULT 0 NOT NULL,
	"transports" text,
	"created" bigint NOT NULL,
	"last_used" bigint
);

--> statement-breakpoint
CREATE TABLE "recovery_codes" (
	"hash" text PRIMARY KEY NOT NULL,
	"account" text NOT NULL,
	"created" bigint NOT NULL,
	"used" bigint
);

--> statement-breakpoint
CREATE TABLE "totp_secrets" (
	"account" text PRIMARY KEY NOT NULL,
	"secret" text NOT NULL,
	"created" bigint NOT NULL,
	"confirmed" bigint,
	"last_step" bigint
);

--> statement-breakpoint
ALTER TABLE "sessions" ADD COLUMN "browser" text;
--> statement-breakpoint
ALTER TABLE "auth_challenges" ADD CONSTRAINT "auth_challenges_account_accounts_id_fk" FOREIGN KEY ("account") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
ALTER TABLE "passkeys" ADD CONSTRAINT "passkeys_account_accounts_id_fk" FOREIGN KEY ("account") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
ALTER TABLE "recovery_codes" ADD CONSTRAINT "recovery_codes_account_accounts_id_fk" FOREIGN KEY ("account") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
ALTER TABLE "totp_secrets" ADD CONSTRAINT "totp_secrets_account_accounts_id_fk" FOREIGN KEY ("account") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
CREATE INDEX "auth_challenges_expires" ON "auth_challenges" USING btree ("expires");
--> statement-breakpoint
CREATE INDEX "passkeys_account" ON "passkeys" USING btree ("account");
--> statement-breakpoint
CREATE INDEX "recovery_codes_account" ON "recovery_codes" USING btree ("account");
