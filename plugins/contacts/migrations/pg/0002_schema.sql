ALTER TABLE "contacts" ADD COLUMN "email_types" text DEFAULT '' NOT NULL;
--> statement-breakpoint
ALTER TABLE "contacts" ADD COLUMN "phone_types" text DEFAULT '' NOT NULL;
