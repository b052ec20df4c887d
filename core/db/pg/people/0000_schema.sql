CREATE TABLE "disabled_accounts" (
	"account" text PRIMARY KEY NOT NULL,
	"at" bigint NOT NULL,
	"by" text NOT NULL
);

