CREATE TABLE "contacts" (
	"id" text PRIMARY KEY NOT NULL,
	"owner" text NOT NULL,
	"name" text NOT NULL,
	"name_key" text NOT NULL,
	"email" text DEFAULT '' NOT NULL,
	"phone" text DEFAULT '' NOT NULL,
	"phone_digits" text DEFAULT '' NOT NULL,
	"note" text DEFAULT '' NOT NULL,
	"created" bigint NOT NULL,
	"updated" bigint NOT NULL
);

--> statement-breakpoint
CREATE UNIQUE INDEX "contacts_owner_name" ON "contacts" USING btree ("owner","name_key");
--> statement-breakpoint
CREATE INDEX "contacts_owner" ON "contacts" USING btree ("owner");
