ALTER TABLE "credential_spend" ADD COLUMN "usdc" bigint DEFAULT 0 NOT NULL;
