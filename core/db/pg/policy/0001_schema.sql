CREATE TABLE "credential_spend" (
	"credential" text NOT NULL,
	"day" text NOT NULL,
	"spent" bigint NOT NULL,
	CONSTRAINT "credential_spend_credential_day_pk" PRIMARY KEY("credential","day")
);

