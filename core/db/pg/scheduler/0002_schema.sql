ALTER TABLE "schedule_firings" ADD COLUMN "fence" bigint DEFAULT 1 NOT NULL;
