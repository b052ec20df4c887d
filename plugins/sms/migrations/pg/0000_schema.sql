CREATE TABLE "sms_codes" (
	"account" text NOT NULL,
	"number" text NOT NULL,
	"hash" text NOT NULL,
	"expires" bigint NOT NULL,
	"wrong" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "sms_codes_account_number_pk" PRIMARY KEY("account","number")
);

--> statement-breakpoint
CREATE TABLE "sms_messages" (
	"id" text PRIMARY KEY NOT NULL,
	"account" text,
	"direction" text NOT NULL,
	"number" text NOT NULL,
	"body" text NOT NULL,
	"segments" bigint NOT NULL,
	"encoding" text NOT NULL,
	"sid" text,
	"status" text NOT NULL,
	"kind" text DEFAULT 'text' NOT NULL,
	"at" bigint NOT NULL
);

--> statement-breakpoint
CREATE TABLE "sms_numbers" (
	"number" text PRIMARY KEY NOT NULL,
	"account" text NOT NULL,
	"at" bigint NOT NULL
);

--> statement-breakpoint
CREATE TABLE "sms_optouts" (
	"number" text PRIMARY KEY NOT NULL,
	"at" bigint NOT NULL
);

--> statement-breakpoint
CREATE INDEX "sms_messages_recent" ON "sms_messages" USING btree ("account","at");
--> statement-breakpoint
CREATE UNIQUE INDEX "sms_messages_sid" ON "sms_messages" USING btree ("sid");
--> statement-breakpoint
CREATE INDEX "sms_messages_number" ON "sms_messages" USING btree ("number","at");
--> statement-breakpoint
CREATE INDEX "sms_numbers_account" ON "sms_numbers" USING btree ("account");
