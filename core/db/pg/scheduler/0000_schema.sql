CREATE TABLE "schedule_collections" (
	"service" text PRIMARY KEY NOT NULL,
	"attempted" bigint NOT NULL,
	"succeeded" bigint,
	"failures" bigint DEFAULT 0 NOT NULL,
	"error" text
);

--> statement-breakpoint
CREATE TABLE "schedule_firings" (
	"service" text NOT NULL,
	"ref" text NOT NULL,
	"due" bigint NOT NULL,
	"status" text NOT NULL,
	"count" bigint DEFAULT 1 NOT NULL,
	"claimed" bigint NOT NULL,
	"finished" bigint,
	"detail" text,
	"owner" text,
	"lease" bigint,
	CONSTRAINT "schedule_firings_service_ref_due_pk" PRIMARY KEY("service","ref","due")
);

--> statement-breakpoint
CREATE TABLE "schedule_jobs" (
	"service" text NOT NULL,
	"ref" text NOT NULL,
	"owner" text,
	"scopes" text NOT NULL,
	"start" bigint NOT NULL,
	"offset" bigint NOT NULL,
	"repeat" text,
	"tz" text,
	"next_due" bigint,
	"created" bigint NOT NULL,
	CONSTRAINT "schedule_jobs_service_ref_pk" PRIMARY KEY("service","ref")
);

--> statement-breakpoint
CREATE INDEX "schedule_firings_lease" ON "schedule_firings" USING btree ("lease");
--> statement-breakpoint
CREATE INDEX "schedule_jobs_next_due" ON "schedule_jobs" USING btree ("next_due");
