ALTER TABLE "schedule_firings" ADD COLUMN "acted" bigint DEFAULT 0 NOT NULL;
