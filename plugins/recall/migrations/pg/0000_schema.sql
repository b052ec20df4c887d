CREATE TABLE "recall_conversations" (
	"id" text PRIMARY KEY NOT NULL,
	"owner" text NOT NULL,
	"client" text NOT NULL,
	"agent" text NOT NULL,
	"topic" text NOT NULL,
	"thread" text,
	"started" bigint NOT NULL,
	"active" bigint NOT NULL,
	"messages" bigint DEFAULT 0 NOT NULL
);

--> statement-breakpoint
CREATE TABLE "recall_messages" (
	"id" text PRIMARY KEY NOT NULL,
	"conversation" text NOT NULL,
	"owner" text NOT NULL,
	"role" text NOT NULL,
	"content" text NOT NULL,
	"at" bigint NOT NULL
);

--> statement-breakpoint
CREATE INDEX "recall_conversations_owner_active" ON "recall_conversations" USING btree ("owner","active");
--> statement-breakpoint
CREATE INDEX "recall_conversations_thread" ON "recall_conversations" USING btree ("owner","thread");
--> statement-breakpoint
CREATE INDEX "recall_messages_conversation_at" ON "recall_messages" USING btree ("conversation","at");
