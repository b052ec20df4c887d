ALTER TABLE "oauth_codes" ADD COLUMN "policy" text;
