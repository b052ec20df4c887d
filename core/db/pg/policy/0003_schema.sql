ALTER TABLE "approvals" ADD COLUMN "args_hash" text;
--> statement-breakpoint
ALTER TABLE "approvals" ADD COLUMN "used" bigint;
