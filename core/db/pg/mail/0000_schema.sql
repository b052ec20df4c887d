CREATE TABLE "mail_messages" (
	"id" text PRIMARY KEY NOT NULL,
	"account" text NOT NULL,
	"folder" text NOT NULL,
	"tag" text,
	"from_addr" text NOT NULL,
	"to_addr" text NOT NULL,
	"subject" text NOT NULL,
	"body" text NOT NULL,
	"message_id" text NOT NULL,
	"in_reply_to" text,
	"refs" text,
	"at" bigint NOT NULL,
	"auth" text,
	"raw" text,
	"delivery" text
);

--> statement-breakpoint
CREATE TABLE "mail_outbox" (
	"id" text PRIMARY KEY NOT NULL,
	"message" text NOT NULL,
	"account" text NOT NULL,
	"sender" text NOT NULL,
	"recipient" text NOT NULL,
	"raw" text NOT NULL,
	"attempts" bigint DEFAULT 0 NOT NULL,
	"next_at" bigint NOT NULL,
	"claimed" bigint,
	"last_error" text,
	"status" text NOT NULL,
	"created" bigint NOT NULL
);

--> statement-breakpoint
CREATE UNIQUE INDEX "mail_messages_once" ON "mail_messages" USING btree ("account","folder","message_id");
--> statement-breakpoint
CREATE INDEX "mail_messages_recent" ON "mail_messages" USING btree ("account","folder","at");
--> statement-breakpoint
CREATE INDEX "mail_messages_raw" ON "mail_messages" USING btree ("raw");
--> statement-breakpoint
CREATE INDEX "mail_outbox_due" ON "mail_outbox" USING btree ("status","next_at");
