ALTER TABLE "contacts" ADD COLUMN "other_emails" text DEFAULT '[]' NOT NULL;
--> statement-breakpoint
ALTER TABLE "contacts" ADD COLUMN "other_phones" text DEFAULT '[]' NOT NULL;
